"""Python client for the undust sidecar (https://github.com/ — this repository's ``proto/``).

- :class:`Undust`: the frontier's calls, ``canonicalize`` (batched) and ``observe`` (ingest),
  with deadlines and retries with backoff on RESOURCE_EXHAUSTED and UNAVAILABLE.
- :class:`Admin`: the operators' calls, authenticated with the token files ``undust serve``
  writes in its data directory (or any token file).
- :mod:`undust_client.scrapy`: ``UndustDupeFilter`` and the ``UndustIngest`` extension.
"""

from .client import (
    Admin,
    CanonicalResult,
    Decision,
    Page,
    Retry,
    RulesView,
    Undust,
    UndustError,
    read_token,
)

__all__ = [
    "Admin",
    "CanonicalResult",
    "Decision",
    "Page",
    "Retry",
    "RulesView",
    "Undust",
    "UndustError",
    "read_token",
]
