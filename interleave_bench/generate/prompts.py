"""The prompts of the model path, in the session's language, and the JSON payload they carry.

Every request puts its input in one fenced JSON block inside the user message (the payload), so a
real model reads it as structured input and the fake model (``generate/fake.py``) can parse it back.
Every payload names its session (``"session": "en-0002"``), which also lets tests aim an injected
fault at one session's requests.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .text import AnswerError

#: language names used inside prompts
LANGUAGE_NAMES = {"en": "English", "zh": "Chinese (简体中文)"}

_BLOCK = re.compile(r"```json\s*\n(.*?)\n```", re.S)


def payload_block(payload: dict[str, Any]) -> str:
    """The payload as a fenced JSON block: one line per top-level field and per list item.

    Compact (a real model pays for every token) yet easy to read: each thread, row or message
    is on a line of its own.
    """
    items = list(payload.items())
    lines = ["{"]
    for n, (key, value) in enumerate(items):
        comma = "," if n < len(items) - 1 else ""
        name = json.dumps(key, ensure_ascii=False)
        if isinstance(value, list) and value and all(isinstance(x, dict) for x in value):
            inner = ",\n".join("  " + json.dumps(x, ensure_ascii=False) for x in value)
            lines.append(f" {name}: [\n{inner}\n ]{comma}")
        else:
            lines.append(f" {name}: {json.dumps(value, ensure_ascii=False)}{comma}")
    lines.append("}")
    return "```json\n" + "\n".join(lines) + "\n```"


def extract_payload(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The payload of a request: the JSON block of its first user message that has one.

    A corrective retry appends messages after it, so the payload stays the first block.
    """
    for m in messages:
        if m.get("role") != "user":
            continue
        match = _BLOCK.search(str(m.get("content", "")))
        if match:
            try:
                obj = json.loads(match.group(1))
            except json.JSONDecodeError:
                continue
            if isinstance(obj, dict):
                return obj
    raise AnswerError(["the request carries no JSON payload"])


SYSTEM = {
    "en": "You create realistic test data for a benchmark of chat assistants. Follow the instructions exactly and answer with one JSON object only.",
    "zh": "你在为一个聊天助手评测基准生成逼真的测试数据。严格按照说明操作，只用一个JSON对象作答。",
}

THREADS = {
    "en": """Invent one person who uses a single chat with an assistant for several unrelated pieces of work ("threads") at the same time. The data tests whether an assistant can tell these threads apart.

Write in English:
- "persona": one sentence about the person (name, age, job, city, situation); build on "persona_hint".
- "threads": one entry for each thread of the specification, with the same "id", in the same order:
  - "title": a short, specific name of this piece of work (2 to 6 words), different from every other title;
  - "goal": one sentence; "description": one or two sentences;
  - "facts": exactly {n_facts} concrete facts, each {{"key": a short snake_case name, "value": a concrete value (a date, an amount, a name, a time, a model, a place...), "update": a different concrete value it will change to later, or null}}. Give an "update" exactly for the facts the specification marks true in "updates" and null for the others. Every value and update in the whole session must be distinct and must not contain a title or another value;
  - "constraints": two or three short sentences.
A thread with "twin_of" has the same domain as that thread: make the two similar in kind, so they are easy to confuse, but give each its own title and facts.

Answer with one JSON object: {{"persona": "...", "threads": [{{"id": "...", "title": "...", "goal": "...", "description": "...", "facts": [...], "constraints": [...]}}]}}.

Specification:
{payload}""",
    "zh": """请虚构一个人：他在同一个聊天窗口里同时请助手处理几件互不相关的事情（“话题”）。这些数据用来测试助手能否把这些话题区分开。

请用中文写：
- "persona"：一句话介绍这个人（名字、年龄、职业、城市、近况），以 "persona_hint" 为基础。
- "threads"：规格里的每个话题各一项，"id" 相同、顺序相同：
  - "title"：这件事的简短、具体的名称（4到12个字），与其他标题都不同；
  - "goal"：一句话；"description"：一到两句话；
  - "facts"：恰好 {n_facts} 个具体事实，每个为 {{"key": 英文 snake_case 短名, "value": 具体取值（日期、金额、人名、时间、型号、地点等）, "update": 之后会改成的另一个具体取值，或 null}}。"updates" 中标为 true 的事实必须给出 "update"，其余为 null。整个会话里所有取值和更新值都必须互不相同，且不能包含任何标题或其他取值；
  - "constraints"：两到三句简短的约束。
带 "twin_of" 的话题与所指话题属于同一领域：让两者性质相近、容易混淆，但标题和事实各不相同。

只用一个JSON对象作答：{{"persona": "...", "threads": [{{"id": "...", "title": "...", "goal": "...", "description": "...", "facts": [...], "constraints": [...]}}]}}。

规格：
{payload}""",
}

WRITE = {
    "en": """Write the user's side of a chat. The user works on several threads in one chat and moves between them. Write the next messages exactly as the plan rows say, in English, one message per row, each one to three sentences, sounding like a real person typing.

Styles:
- explicit: name the thread's subject clearly, by its title.
- cue: do not name the subject; mention the detail given in "cue" (its value exactly as written) so a careful reader can tell which thread it is.
- pronoun: refer to the thread only vaguely ("that one", "the other thing"); never its title or any of its details.
- implicit: just carry on ("ok, what's next?") with no reference to the subject at all.
- oneoff: a short general question that has nothing to do with any thread.
Actions: new = the first message of a thread; continue = the same thread as the message before; switch = back to a thread used recently; return = back to a thread after a long gap; oneoff = a one-off question.
A row with "fact" must state it: kind "state" gives "value"; kind "update" changes "previous" to "value". Write values exactly as given.
A row with "refs" must also draw on that other thread through the given detail, without making it the subject.
"earlier" shows the last messages before these rows. Vary the wording from message to message.

Answer with one JSON object: {{"messages": [{{"i": <the row's i>, "text": "..."}}]}}, one entry per row, in order.

Input:
{payload}""",
    "zh": """请写出聊天中用户一方的消息。用户在同一个聊天里同时处理几件事（话题），并在它们之间来回切换。严格按照计划行写出接下来的消息，用中文，每行一条，每条一到三句，像真人打字一样自然。

风格：
- explicit：用标题明确点出这件事。
- cue：不提这件事的名称；提到 "cue" 里给出的细节（取值原样照写），让细心的读者能判断是哪件事。
- pronoun：只用含糊的指代（“那个”“另一件事”）；绝不出现标题或任何细节。
- implicit：直接接着说（“好的，下一步呢？”），完全不提是哪件事。
- oneoff：一个和所有话题都无关的简短常识问题。
动作：new = 某话题的第一条消息；continue = 与上一条同一话题；switch = 回到最近聊过的话题；return = 隔了很久再回到某话题；oneoff = 一次性问题。
带 "fact" 的行必须说出这个事实：kind 为 "state" 时给出 "value"；为 "update" 时把 "previous" 改成 "value"。取值原样照写。
带 "refs" 的行还要通过给出的细节引用另一个话题，但主题不能变成那个话题。
"earlier" 是这些行之前的最近几条消息。每条消息的措辞要有变化。

只用一个JSON对象作答：{{"messages": [{{"i": <该行的 i>, "text": "..."}}]}}，每行一项，按顺序。

输入：
{payload}""",
}

REWRITE = {
    "en": """The message in the input was meant to be vague (style "{style}"), but it names things it must not: {forbidden}. Rewrite it in English so it keeps its meaning and tone but contains none of those strings.{keep}

Answer with one JSON object: {{"text": "..."}}.

Input:
{payload}""",
    "zh": """输入中的消息本应含糊（风格 "{style}"），却出现了不该出现的内容：{forbidden}。请用中文改写，保留原意和语气，但不能包含其中任何一项。{keep}

只用一个JSON对象作答：{{"text": "..."}}。

输入：
{payload}""",
}

REWRITE_KEEP = {
    "en": " It must still contain, exactly as written: {values}.",
    "zh": " 改写后仍必须原样包含：{values}。",
}

READ = {
    "en": """Label the new messages of a chat in which one user works on several threads at once. For each new message decide which thread it belongs to, using only the thread list, the earlier messages (with the labels already given) and the message itself; do not look at later messages.
Answer "thread": a thread id; "none" when the message belongs to no thread (an unrelated one-off question); "ambiguous" when it could belong to two or more threads and nothing decides, and then list the possible thread ids in "candidates".

Answer with one JSON object: {{"labels": [{{"i": <the message's i>, "thread": "...", "candidates": [...]}}]}}, one entry per new message, in order.

Input:
{payload}""",
    "zh": """请为一段聊天中的新消息打标签：用户在同一个聊天里同时处理几件事（话题）。对每条新消息，只根据话题列表、之前的消息（及已给出的标签）和这条消息本身判断它属于哪个话题；不要看后面的消息。
"thread" 填话题 id；消息不属于任何话题（无关的一次性问题）时填 "none"；可能属于两个或更多话题且无法判断时填 "ambiguous"，并在 "candidates" 中列出可能的话题 id。

只用一个JSON对象作答：{{"labels": [{{"i": <消息的 i>, "thread": "...", "candidates": [...]}}]}}，每条新消息一项，按顺序。

输入：
{payload}""",
}

CORRECT = {
    "en": "Your answer could not be used: {problems}. Answer again with one JSON object in exactly the required format and nothing else.",
    "zh": "你的回答无法使用：{problems}。请重新作答，只输出一个完全符合要求格式的JSON对象，不要有其他内容。",
}


def _messages(lang: str, user: str) -> list[dict[str, Any]]:
    return [{"role": "system", "content": SYSTEM[lang]}, {"role": "user", "content": user}]


def threads_messages(lang: str, payload: dict[str, Any], n_facts: int) -> list[dict[str, Any]]:
    return _messages(lang, THREADS[lang].format(payload=payload_block(payload), n_facts=n_facts))


def write_messages(lang: str, payload: dict[str, Any]) -> list[dict[str, Any]]:
    return _messages(lang, WRITE[lang].format(payload=payload_block(payload)))


def rewrite_messages(lang: str, payload: dict[str, Any], style: str, forbidden: list[str], keep: list[str]) -> list[dict[str, Any]]:
    quoted = ", ".join(json.dumps(f, ensure_ascii=False) for f in forbidden)
    keep_text = REWRITE_KEEP[lang].format(values=", ".join(json.dumps(k, ensure_ascii=False) for k in keep)) if keep else ""
    return _messages(lang, REWRITE[lang].format(payload=payload_block(payload), style=style, forbidden=quoted, keep=keep_text))


def read_messages(lang: str, payload: dict[str, Any]) -> list[dict[str, Any]]:
    return _messages(lang, READ[lang].format(payload=payload_block(payload)))


def correction(lang: str, problems: list[str]) -> str:
    shown = "; ".join(problems[:5]) + ("; ..." if len(problems) > 5 else "")
    return CORRECT[lang].format(problems=shown)


# --- v1: alternatives, replies and fact steps (docs/generate.md#v1-replies-fact-episodes-timeline-and-probes) ------------------------------------

THREADS_V1 = {
    "en": """
Each fact also needs "alternative": another plausible value of the same kind (one an assistant might propose instead), different from its value, its update and every other value of the session.""",
    "zh": """
每个事实还要给出 "alternative"：同类的另一个合理取值（助手可能会提议的另一个值），与它的取值、更新值以及会话中其他所有取值都不同。""",
}

WRITE_V1 = {
    "en": """Write both sides of a chat: the user's message and the assistant's reply for each plan row. The user works on several threads in one chat and moves between them. Write exactly as the rows say, in English: the user's message one to three sentences, sounding like a real person typing; the reply one to three sentences, helpful, answering that message.

Styles (of the user's message):
- explicit: name the thread's subject clearly, by its title.
- cue: do not name the subject; mention the detail given in "cue" (its value exactly as written).
- pronoun: refer to the thread only vaguely ("that one", "the other thing"); never its title or any of its details.
- implicit: just carry on ("ok, what's next?") with no reference to the subject at all.
- oneoff: a short general question that has nothing to do with any thread.
Actions: new = the first message of a thread; continue = the same thread as the message before; switch = back to a thread used recently; return = back to a thread after a long gap; oneoff = a one-off question.
A row with "fact" must do its step ("key" names the fact, "value" its value, "previous" the value it replaces):
- intro: the user states the value, not as a question;
- update: the user changes "previous" to "value", not as a question;
- propose: the reply proposes "value"; the user does not state it (the user may ask for a suggestion);
- accept: the user agrees to what the assistant proposed, without repeating the value, not as a question and not as a refusal;
- reject: the user turns down "previous" and states "value" instead;
- retract: the user withdraws the fact ("previous" is no longer settled), without asking a question.
Write values exactly as given. No reply states a fact value except a "propose" reply.
A row with "refs" must also draw on that other thread through the given detail, without making it the subject.
"earlier" shows the last exchanges before these rows. Vary the wording.

Answer with one JSON object: {{"messages": [{{"i": <the row's i>, "text": "<the user's message>", "assistant": "<the reply>"}}]}}, one entry per row, in order.

Input:
{payload}""",
    "zh": """请写出聊天的双方：每个计划行对应一条用户消息和一条助手回复。用户在同一个聊天里同时处理几件事（话题），并在它们之间来回切换。严格按照计划行写，用中文：用户消息一到三句，像真人打字；回复一到三句，有帮助，回应那条消息。

风格（用户消息）：
- explicit：用标题明确点出这件事。
- cue：不提这件事的名称；提到 "cue" 里给出的细节（取值原样照写）。
- pronoun：只用含糊的指代（“那个”“另一件事”）；绝不出现标题或任何细节。
- implicit：直接接着说（“好的，下一步呢？”），完全不提是哪件事。
- oneoff：一个和所有话题都无关的简短常识问题。
动作：new = 某话题的第一条消息；continue = 与上一条同一话题；switch = 回到最近聊过的话题；return = 隔了很久再回到某话题；oneoff = 一次性问题。
带 "fact" 的行必须完成它的步骤（"key" 是事实名，"value" 是取值，"previous" 是被替换的取值）：
- intro：用户说出取值，不能是疑问句；
- update：用户把 "previous" 改成 "value"，不能是疑问句；
- propose：由回复提议 "value"；用户不说出这个值（可以请助手建议）；
- accept：用户同意助手的提议，不重复取值，不是疑问句，也不是拒绝；
- reject：用户拒绝 "previous"，并说出 "value"；
- retract：用户撤回这个事实（"previous" 不再算数），不提问。
取值原样照写。除 "propose" 的回复外，回复不说出任何事实取值。
带 "refs" 的行还要通过给出的细节引用另一个话题，但主题不能变成那个话题。
"earlier" 是这些行之前的最近几轮对话。措辞要有变化。

只用一个JSON对象作答：{{"messages": [{{"i": <该行的 i>, "text": "<用户消息>", "assistant": "<回复>"}}]}}，每行一项，按顺序。

输入：
{payload}""",
}

CHECK_FACTS = {
    "en": """Judge each exchange of a chat (the user's message and the assistant's reply) by its meaning: does it do its fact step? Steps: intro = the user states the value, not as a question; update = the user changes "previous" to "value", not as a question; propose = the reply proposes "value" and the user does not state it; accept = the user agrees to the proposal without repeating the value, not as a question and not as a refusal; reject = the user turns down "previous" and states "value"; retract = the user withdraws the fact without asking a question.
Judge what is meant, not particular words.

Answer with one JSON object: {{"results": [{{"i": <the exchange's i>, "ok": true or false, "why": "<a short reason when not ok>"}}]}}, one entry per exchange, in order.

Input:
{payload}""",
    "zh": """请按意思判断聊天中的每一轮（用户消息和助手回复）是否完成了它的事实步骤。步骤：intro = 用户说出取值，不是疑问句；update = 用户把 "previous" 改成 "value"，不是疑问句；propose = 回复提议 "value"，用户没有说出它；accept = 用户同意提议，不重复取值，不是疑问句也不是拒绝；reject = 用户拒绝 "previous" 并说出 "value"；retract = 用户撤回这个事实，不提问。
按意思判断，不要只看某些字词。

只用一个JSON对象作答：{{"results": [{{"i": <该轮的 i>, "ok": true 或 false, "why": "<不通过时的简短理由>"}}]}}，每轮一项，按顺序。

输入：
{payload}""",
}

FACT_REWRITE = {
    "en": """The exchange in the input does not do its fact step ("step"): {why}. Rewrite the user's message and the assistant's reply in English so that they do it, keeping the rest of the meaning, the style of the message and its tone. The step: {step_rule}

Answer with one JSON object: {{"text": "<the user's message>", "assistant": "<the reply>"}}.

Input:
{payload}""",
    "zh": """输入中的这一轮没有完成它的事实步骤（"step"）：{why}。请用中文改写用户消息和助手回复，使其完成这个步骤，同时保留其余意思、消息的风格和语气。步骤要求：{step_rule}

只用一个JSON对象作答：{{"text": "<用户消息>", "assistant": "<回复>"}}。

输入：
{payload}""",
}

STEP_RULES = {
    "en": {
        "intro": "the user states the value, not as a question.",
        "update": 'the user changes "previous" to "value", not as a question.',
        "propose": 'the reply proposes "value"; the user does not state it.',
        "accept": "the user agrees without repeating the value, not as a question and not as a refusal.",
        "reject": 'the user turns down "previous" and states "value" instead.',
        "retract": "the user withdraws the fact, without asking a question.",
    },
    "zh": {
        "intro": "用户说出取值，不是疑问句。",
        "update": "用户把 \"previous\" 改成 \"value\"，不是疑问句。",
        "propose": "回复提议 \"value\"；用户不说出它。",
        "accept": "用户同意，不重复取值，不是疑问句也不是拒绝。",
        "reject": "用户拒绝 \"previous\"，改说 \"value\"。",
        "retract": "用户撤回这个事实，不提问。",
    },
}


def threads_v1_messages(lang: str, payload: dict[str, Any], n_facts: int) -> list[dict[str, Any]]:
    """The threads request of a v1 session: v0's, asking for an ``alternative`` per fact too."""
    text = THREADS[lang].format(payload=payload_block(payload), n_facts=n_facts)
    head, sep, tail = text.rpartition("\n\n")  # the specification block stays last
    return _messages(lang, head + THREADS_V1[lang] + sep + tail)


def write_v1_messages(lang: str, payload: dict[str, Any]) -> list[dict[str, Any]]:
    return _messages(lang, WRITE_V1[lang].format(payload=payload_block(payload)))


def check_facts_messages(lang: str, payload: dict[str, Any]) -> list[dict[str, Any]]:
    return _messages(lang, CHECK_FACTS[lang].format(payload=payload_block(payload)))


def fact_rewrite_messages(lang: str, payload: dict[str, Any], step: str, why: str) -> list[dict[str, Any]]:
    return _messages(lang, FACT_REWRITE[lang].format(payload=payload_block(payload), why=why,
                                                     step_rule=STEP_RULES[lang][step]))
