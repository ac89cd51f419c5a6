"""Base URLs read from the environment (``OPENAI_BASE_URL``, ``HF_ENDPOINT``, a ``--router`` URL):
checked before any work, and shown in messages without their user name or password."""

from __future__ import annotations

import re as _re

from .errors import UsageError
from .redaction import REDACTED


def require_base_url(variable: str, url: str) -> str:
    """``url``, the value of the environment variable ``variable`` that names a server's base URL
    (``OPENAI_BASE_URL``, ``HF_ENDPOINT``), when an HTTP client can send to it: ``http://`` or
    ``https://``, a host, a port (if given) of 1 to 65535, no blank or control character. Else a
    :class:`UsageError` naming ``variable``, raised where the variable is read, before any work (a
    run never starts on an address no call can reach, nor stops half-way on the client's own
    error). The message shows the URL without a user name or password (:func:`shown_url`) and
    echoes no part of it besides, so a password however malformed is in no message."""
    from urllib.parse import urlsplit

    def refuse(why: str) -> UsageError:
        return UsageError(f"{variable}: {shown_url(url)!r} is not a base URL an HTTP client can use: {why} "
                          "(expected http(s)://HOST[:PORT][/PATH])")

    if any(c.isspace() or not c.isprintable() for c in url):
        raise refuse("it holds a blank or control character")
    scheme, sep, rest = url.partition("://")
    if not sep:
        raise refuse("it does not start with http:// or https://")
    if scheme.lower() not in ("http", "https"):
        raise refuse(f"the scheme is {scheme!r}, not http or https")
    host_port = _re.split(r"[/?#]", rest, maxsplit=1)[0].rpartition("@")[2]
    if host_port.startswith("["):  # an IPv6 address: [::1]:8080
        host, closed, after = host_port[1:].partition("]")
        if not closed:
            raise refuse("its IPv6 host has no closing ']'")
        if after and not after.startswith(":"):
            raise refuse("text follows its IPv6 host")
        port = after[1:]
    else:
        host, _, port = host_port.partition(":")
    if not host:
        raise refuse("it names no host")
    if port and not (port.isascii() and port.isdigit() and 1 <= int(port) <= 65535):
        raise refuse("its port is not a number from 1 to 65535")
    try:  # what the standard library's parser (and so the clients') refuses besides: [zz] for a host
        urlsplit(url).port
    except ValueError:
        raise refuse("its host is not a valid name or address") from None
    return url


def shown_url(url: str) -> str:
    """``url`` as a message may show it: a user name and password (``user:pass@``, however
    malformed the rest) replaced by :data:`REDACTED`."""
    start = url.find("://") + 3 if "://" in url else 0
    at = url.rfind("@")
    return url if at < start else url[:start] + REDACTED + url[at:]


def credentials_apart(url: str) -> "tuple[str, str | None]":
    """``url`` without its user name and password (``http://user:pass@host/x``: ``http://host/x``),
    for an HTTP client that takes none from a URL (``urllib``), and the ``Authorization`` header
    value that sends them instead: HTTP Basic (RFC 7617), ``user:password`` percent-decoded, in
    UTF-8 and base64; None for a URL without them. A URL :func:`require_base_url` accepted."""
    import base64
    from urllib.parse import unquote, urlsplit

    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, None
    start = url.index("//") + 2  # the netloc follows the scheme's "//" as written
    bare = url[:start] + parts.netloc.rpartition("@")[2] + url[start + len(parts.netloc):]
    if not parts.username and not parts.password:  # "http://@host": an empty user-info
        return bare, None
    pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
    return bare, "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii")
