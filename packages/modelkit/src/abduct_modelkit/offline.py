"""Loading weights on machines without network: fail in seconds, with one line that says
what was looked for and how to provide it.

Evaluation machines are often offline (clusters, air-gapped servers). Left alone, the
Hugging Face hub client retries each file it tries for a minute or more before giving up,
and libraries log the failure before raising it. A package that loads weights by name
(a hub name, an open_clip pretrained tag, a BERTScore model) does instead::

    with hub_access() as hub:            # hub.online: the hub answered a quick probe
        if not hub.online and not cached:  # the package's own cache lookup
            raise weights_unavailable(
                "clip:ViT-B-16@openai", ["hub timm/vit_base_patch16_clip_224.openai", ...],
                how="clip:/path/to/weights.pt", reason=hub.reason)
        load()                           # offline: the hub client reads its cache only

Offline means ``HF_HUB_OFFLINE`` or ``TRANSFORMERS_OFFLINE`` is set, or the hub endpoint
(``HF_ENDPOINT``, default huggingface.co) does not accept a connection within
``PROBE_SECONDS``. Inside ``hub_access`` an offline process runs the hub client in its offline
mode, so cached files load with no network call and missing ones fail at once. No Hugging Face
library is a dependency: ``huggingface_hub`` is touched by name, only if installed.
"""

from __future__ import annotations

import importlib
import os
import socket
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from abduct import AbductError

OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
DEFAULT_ENDPOINT = "https://huggingface.co"
PROBE_SECONDS = 3.0
_TRUE = {"1", "true", "yes", "on"}


def offline_requested() -> bool:
    """True when the user asked for offline mode (``HF_HUB_OFFLINE`` / ``TRANSFORMERS_OFFLINE``)."""
    return any(os.environ.get(name, "").strip().lower() in _TRUE for name in OFFLINE_VARIABLES)


def hub_endpoint() -> str:
    return os.environ.get("HF_ENDPOINT", "").strip().rstrip("/") or DEFAULT_ENDPOINT


def hub_cache_dir() -> Path:
    """Where the Hugging Face hub client keeps downloads (``HF_HUB_CACHE``, else ``HF_HOME/hub``,
    else ``$XDG_CACHE_HOME/huggingface/hub``, else ``~/.cache/huggingface/hub``)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg).expanduser() / "huggingface" / "hub"


@cache
def _accepts_connections(host: str, port: int, timeout: float) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:  # refused, unroutable, no DNS: all the same to a user who needs weights
        return False


def reachable(url: str, timeout: float = PROBE_SECONDS) -> bool:
    """Whether ``url``'s host accepts a TCP connection within ``timeout`` (asked once per process)."""
    parts = urlsplit(url)
    if not parts.hostname:
        return False
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return _accepts_connections(parts.hostname, port, timeout)


def hub_online() -> bool:
    """The hub can be used: offline mode not requested and its endpoint answers."""
    return not offline_requested() and reachable(hub_endpoint())


def offline_reason() -> str:
    """Why ``hub_online()`` is False, for the error line."""
    if offline_requested():
        names = [n for n in OFFLINE_VARIABLES if os.environ.get(n, "").strip().lower() in _TRUE]
        return f"{' and '.join(names)} set"
    return f"{urlsplit(hub_endpoint()).netloc or hub_endpoint()} unreachable"


@dataclass(frozen=True)
class HubState:
    online: bool
    reason: str  # why it is offline ("" when online)


@contextmanager
def hub_access() -> Iterator[HubState]:
    """Yield whether the hub is online (and why not); when it is not, run the hub client (and
    transformers, which asks it) in offline mode for the duration: cache only, no network
    call, no retries."""
    if hub_online():
        yield HubState(True, "")
        return
    state = HubState(False, offline_reason())
    # HF_HUB_OFFLINE is read at call time by huggingface_hub.is_offline_mode()
    with patched_hub({name: "1" for name in OFFLINE_VARIABLES}, "HF_HUB_OFFLINE", True):
        yield state


@contextmanager
def patched_hub(env: Mapping[str, str | None], constant: str, value: Any) -> Iterator[None]:
    """Set (a string) or unset (None) environment variables and one ``huggingface_hub.constants``
    value, restoring all on exit: the hub client reads some settings at import, some per call."""
    saved = {name: os.environ.get(name) for name in env}
    for name, new in env.items():
        _set_env(name, new)
    constants = _hub_constants()
    previous = getattr(constants, constant, None)
    if constants is not None:
        setattr(constants, constant, value)
    try:
        yield
    finally:
        if constants is not None:
            setattr(constants, constant, previous)
        for name, old in saved.items():
            _set_env(name, old)


def _set_env(name: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


def _hub_constants() -> Any:
    try:
        return importlib.import_module("huggingface_hub.constants")
    except ImportError:
        return None


def hub_file_cached(repo_id: str, filename: str, cache_dir: Path | None = None) -> Path | None:
    """The cached copy of ``repo_id/filename`` in the hub cache (``hub_cache_dir()`` unless
    given), if any; never downloads."""
    try:
        hub = importlib.import_module("huggingface_hub")
    except ImportError:
        return None
    try:
        found = hub.try_to_load_from_cache(repo_id, filename, cache_dir=str(cache_dir or hub_cache_dir()))
    except ValueError:  # not a valid repository id (e.g. a path): nothing of it can be cached
        return None
    return Path(found) if isinstance(found, str) else None


def weights_unavailable(what: str, looked_for: Sequence[str], *, how: str, reason: str | None = None) -> AbductError:
    """The one-line error for weights that are neither local nor downloadable now."""
    why = reason or offline_reason()
    return AbductError(
        f"{what}: weights not found and cannot be downloaded ({why}); looked for {'; '.join(looked_for)}. "
        f"Provide them as {how}, or download them once with network into the Hugging Face cache "
        f"({hub_cache_dir()}; HF_HOME moves it) and set HF_HUB_OFFLINE=1"
    )
