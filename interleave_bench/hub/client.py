"""The Hub client the push and leaderboard commands share: endpoint, token check, error lines.

The endpoint is ``HF_ENDPOINT`` read when a command runs (``huggingface_hub`` itself reads it once,
at import), so a Hub mirror or a local stand-in is picked up however the process was started; one
no HTTP client can use is refused in one line naming it (:func:`endpoint_setting`), when the Hub
library is first imported (:class:`EndpointCheck`), so commands that never load it run. The
token comes from ``HF_TOKEN`` or the standard login (``hf auth login``) through
``huggingface_hub.get_token``; this module never stores, prints or passes it anywhere itself, and
scrubs it from any error text just in case a server echoes it.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import os
import sys
from typing import Any, Iterator

from .. import __version__
from ..errors import UsageError
from ..redaction import REDACTED, add_key_in_use, redact
from ..urls import require_base_url

#: the Hub's repo type for everything this package publishes
REPO_TYPE = "dataset"
#: the environment variable naming the Hub's address
ENDPOINT_VARIABLE = "HF_ENDPOINT"


def endpoint_setting() -> str:
    """``HF_ENDPOINT`` as set (empty when it is not), refused in one line naming it when no HTTP
    client can use it (:func:`~interleave_bench.urls.require_base_url`)."""
    value = os.environ.get(ENDPOINT_VARIABLE, "")
    return require_base_url(ENDPOINT_VARIABLE, value) if value else ""


#: the library that reads ``HF_ENDPOINT`` when first imported (``datasets`` and ``evaluate`` import it)
HUB_LIBRARY = "huggingface_hub"


class EndpointCheck(importlib.abc.MetaPathFinder):
    """Checks ``HF_ENDPOINT`` (:func:`endpoint_setting`) when :data:`HUB_LIBRARY` is first imported,
    and finds nothing itself. That library stops its own import with a bare ``ValueError`` on an
    endpoint no HTTP client can use; checked just before, the command that needs the Hub stops in
    one line naming the variable, and one that does not (``score`` of a local folder) runs."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        if fullname == HUB_LIBRARY:
            endpoint_setting()
        return None


def check_endpoint_on_import() -> None:
    """Put :class:`EndpointCheck` first on the import path (once), unless the library is loaded already."""
    if HUB_LIBRARY not in sys.modules and not any(isinstance(f, EndpointCheck) for f in sys.meta_path):
        sys.meta_path.insert(0, EndpointCheck())


def endpoint() -> str:
    """The Hub endpoint: ``HF_ENDPOINT`` if set (:func:`endpoint_setting`), else the one
    ``huggingface_hub`` was configured with."""
    from huggingface_hub import constants

    if ENDPOINT_VARIABLE in os.environ and not os.environ[ENDPOINT_VARIABLE].strip():
        # set but blank: huggingface_hub takes it for the endpoint, and every call fails on no URL
        raise UsageError(f"{ENDPOINT_VARIABLE} is set but blank: unset it for the Hub, or give a server's URL")
    return (endpoint_setting() or constants.ENDPOINT).rstrip("/")


def hub_api():
    """An ``HfApi`` on :func:`endpoint`, identifying the package in its user agent."""
    from huggingface_hub import HfApi

    return HfApi(endpoint=endpoint(), library_name="interleave-bench", library_version=__version__)


def require_token() -> None:
    """Stop with a clear message when there is no token to write with (nothing is sent without one).
    The token, a login's too (not in the environment), is a secret from then on in this process
    (:func:`~interleave_bench.redaction.add_key_in_use`): kept out of what is written, and refused
    in what is published (:mod:`.outgoing`)."""
    from huggingface_hub import get_token

    token = get_token()
    if not token:
        raise UsageError("no Hugging Face token: set HF_TOKEN or run `hf auth login` (a token with write access)")
    add_key_in_use(token)


def check_repo_id(repo_id: str) -> str:
    """``ORG/NAME`` or a one-line error."""
    parts = repo_id.split("/")
    if len(parts) != 2 or not all(parts) or any(c.isspace() for c in repo_id):
        raise UsageError(f"--repo {repo_id!r}: expected ORG/NAME")
    return repo_id


def repo_url(repo_id: str, revision: str | None = None) -> str:
    """The repo's page (at ``revision`` when given)."""
    base = f"{endpoint()}/datasets/{repo_id}"
    return f"{base}/tree/{revision}" if revision else base


def scrub(text: str) -> str:
    """A text of or for the Hub (an error of its client, a commit's message, a cell of a file
    published) without the token (wherever it was read from: a login's file
    too, taken for a secret from then on, in every form it may be written in) or any other secret
    (:func:`~interleave_bench.redaction.redact`)."""
    from huggingface_hub import get_token

    token = get_token()
    if not token:
        return redact(text)
    add_key_in_use(token)
    return redact(text.replace(token, REDACTED))


@contextlib.contextmanager
def hub_errors(what: str, after: str = "") -> Iterator[None]:
    """Turn the Hub client's exceptions into one-line :class:`UsageError` (exit 2).

    ``what`` names the operation ("push to org/name"); ``after`` is added to say what state the
    repo is left in (e.g. "the repo still holds its previous revision").
    """
    import httpx2
    from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError, RevisionNotFoundError

    tail = f"; {after}" if after else ""
    try:
        yield
    except RepositoryNotFoundError:
        raise UsageError(f"{what}: repository not found, or not accessible with this token{tail}") from None
    except RevisionNotFoundError as exc:
        raise UsageError(f"{what}: revision not found ({_first_line(exc)}){tail}") from None
    except HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else "?"
        if status == 401:
            raise UsageError(f"{what}: not authorized (HTTP 401): check HF_TOKEN or `hf auth login`{tail}") from None
        raise UsageError(f"{what}: the Hub answered HTTP {status}: {_server_message(exc)}{tail}") from None
    except ValueError as exc:  # the client's own checks, e.g. README metadata the Hub rejects
        raise UsageError(f"{what}: {_first_line(exc)}{tail}") from None
    except httpx2.HTTPError as exc:
        raise UsageError(f"{what}: cannot reach {endpoint()} ({type(exc).__name__}: {scrub(str(exc))}){tail}") from None


def _first_line(exc: Exception) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return scrub(lines[0] if lines else type(exc).__name__)


def _server_message(exc) -> str:
    msg = getattr(exc, "server_message", None)
    if msg:
        return scrub(" ".join(str(msg).split()))
    return _first_line(exc)
