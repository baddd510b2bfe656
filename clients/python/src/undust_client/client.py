"""A small typed API over the generated gRPC stubs.

Retries: a call that fails with RESOURCE_EXHAUSTED (the sidecar sheds load) or UNAVAILABLE (not
up yet, restarting, draining) is retried with exponential backoff and full jitter, up to
``Retry.attempts`` tries, each with its own deadline. A Canonicalize batch that failed was not
recorded (the server records a batch whole or not at all), so resending it is safe; an
ObservePages stream that failed was not acknowledged, so its pages are resent whole.
"""

from __future__ import annotations

import enum
import os
import pathlib
import random
import time
import uuid
from dataclasses import dataclass, field
from typing import Callable, Iterable, List, Optional, Sequence, TypeVar

import grpc

from ._pb import admin_pb2, admin_pb2_grpc
from ._pb import canonicalizer_pb2, canonicalizer_pb2_grpc
from ._pb import ingest_pb2, ingest_pb2_grpc

DEFAULT_ADDRESS = "127.0.0.1:50051"
DEFAULT_ADMIN_ADDRESS = "127.0.0.1:50052"
DEFAULT_DATA_DIR = "undust-data"
#: URLs per Canonicalize request (the server's default limit is 10,000).
DEFAULT_BATCH_SIZE = 1000
#: Largest message the client accepts or sends (the server's default limit).
MAX_MESSAGE_BYTES = 32 * 1024 * 1024

RETRYABLE = (grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.UNAVAILABLE)

T = TypeVar("T")


class UndustError(Exception):
    """A call failed for good: not retryable, or out of attempts. ``code`` is the gRPC status."""

    def __init__(self, code: grpc.StatusCode, message: str):
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Retry:
    """Retry policy: ``attempts`` tries in all, backoff from ``initial`` doubling to ``maximum``."""

    attempts: int = 5
    initial: float = 0.05
    maximum: float = 2.0

    def run(self, call: Callable[[], T], sleep: Callable[[float], None] = time.sleep) -> T:
        delay = self.initial
        for attempt in range(1, max(1, self.attempts) + 1):
            try:
                return call()
            except grpc.RpcError as err:
                code = err.code()
                if code not in RETRYABLE or attempt >= self.attempts:
                    raise UndustError(code, err.details() or "") from err
                sleep(random.uniform(0, delay))
                delay = min(self.maximum, delay * 2)
        raise AssertionError("unreachable: the loop returns or raises")


class Decision(enum.Enum):
    NEW = canonicalizer_pb2.DECISION_NEW
    DUPLICATE = canonicalizer_pb2.DECISION_DUPLICATE
    INVALID = canonicalizer_pb2.DECISION_INVALID
    UNSPECIFIED = canonicalizer_pb2.DECISION_UNSPECIFIED


class RulesView(enum.IntEnum):
    """The forms of a host's rules :meth:`Admin.rules` asks for: the fields, the rule file
    (``rules_json``, what ``undust learn`` writes), or both."""

    FULL = admin_pb2.RULES_VIEW_FULL
    STRUCTURED = admin_pb2.RULES_VIEW_STRUCTURED
    RULE_FILE = admin_pb2.RULES_VIEW_RULE_FILE


@dataclass(frozen=True)
class CanonicalResult:
    """undust's answer for one URL."""

    url: str
    decision: Decision
    canonical: str
    enqueue_url: str
    rule_id: str = ""
    rules_version: int = 0
    invalid_reason: str = ""

    @property
    def is_new(self) -> bool:
        return self.decision is Decision.NEW

    @property
    def is_duplicate(self) -> bool:
        return self.decision is Decision.DUPLICATE


@dataclass
class Page:
    """One fetched page, as ``Ingest.ObservePages`` takes it."""

    url: str
    body: bytes = b""
    http_status: int = 200
    content_type: str = "text/html"
    final_url: str = ""
    rel_canonical: str = ""
    server_ip: str = ""
    fetched_at_unix_ms: int = field(default_factory=lambda: int(time.time() * 1000))

    def to_pb(self) -> ingest_pb2.ObservedPage:
        return ingest_pb2.ObservedPage(
            url=self.url,
            final_url=self.final_url,
            http_status=self.http_status,
            content_type=self.content_type,
            body=self.body,
            rel_canonical=self.rel_canonical,
            server_ip=self.server_ip,
            fetched_at_unix_ms=self.fetched_at_unix_ms,
        )


def _channel(address: str, max_receive: int = MAX_MESSAGE_BYTES) -> grpc.Channel:
    options = [
        ("grpc.max_receive_message_length", max_receive),
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ]
    return grpc.insecure_channel(address, options=options)


class Undust:
    """The frontier's client: ``canonicalize`` discovered URLs, ``observe`` fetched pages."""

    def __init__(
        self,
        address: str = DEFAULT_ADDRESS,
        *,
        timeout: float = 10.0,
        batch_size: int = DEFAULT_BATCH_SIZE,
        retry: Retry = Retry(),
    ):
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.address = address
        self.timeout = timeout
        self.batch_size = batch_size
        self.retry = retry
        self._channel = _channel(address)
        self._canonicalizer = canonicalizer_pb2_grpc.CanonicalizerStub(self._channel)
        self._ingest = ingest_pb2_grpc.IngestStub(self._channel)

    def canonicalize(self, urls: Sequence[str], *, dry_run: bool = False) -> List[CanonicalResult]:
        """The canonical form and decision of every URL, in order, in batches of ``batch_size``."""
        results: List[CanonicalResult] = []
        for start in range(0, len(urls), self.batch_size):
            chunk = list(urls[start : start + self.batch_size])
            # One id per batch, the same on every retry of it: a retry after a lost answer gets
            # the first answer back instead of DUPLICATE for the URLs it recorded.
            request = canonicalizer_pb2.CanonicalizeRequest(
                urls=chunk, dry_run=dry_run, request_id=uuid.uuid4().hex
            )
            response = self.retry.run(
                lambda: self._canonicalizer.Canonicalize(request, timeout=self.timeout)
            )
            if len(response.results) != len(chunk):
                raise UndustError(
                    grpc.StatusCode.INTERNAL,
                    f"{len(response.results)} results for {len(chunk)} URLs",
                )
            results.extend(
                CanonicalResult(
                    url=url,
                    decision=Decision(r.decision),
                    canonical=r.canonical,
                    enqueue_url=r.enqueue_url,
                    rule_id=r.rule_id,
                    rules_version=r.rules_version,
                    invalid_reason=r.invalid_reason,
                )
                for url, r in zip(chunk, response.results)
            )
        return results

    def observe(self, pages: Iterable[Page]) -> ingest_pb2.ObservePagesSummary:
        """Streams pages to ingest; returns the summary once they are acknowledged (durable)."""
        messages = [page.to_pb() for page in pages]
        return self.retry.run(
            lambda: self._ingest.ObservePages(iter(messages), timeout=self.timeout)
        )

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> "Undust":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def read_token(path: os.PathLike | str) -> str:
    """The first non-empty line of a token file (what ``undust serve`` reads and writes)."""
    path = pathlib.Path(path)
    for line in path.read_text().splitlines():
        if line.strip():
            return line.strip()
    raise ValueError(f"{path}: the token file is empty")


class Admin:
    """The operators' client. The token comes from ``token``, ``token_file``, or ``data_dir``
    (``admin-write.token``, else ``admin-read.token``, as ``undust serve`` generates them)."""

    def __init__(
        self,
        address: str = DEFAULT_ADMIN_ADDRESS,
        *,
        token: Optional[str] = None,
        token_file: Optional[os.PathLike | str] = None,
        data_dir: Optional[os.PathLike | str] = None,
        timeout: float = 30.0,
        retry: Retry = Retry(),
    ):
        if token is None:
            if token_file is not None:
                token = read_token(token_file)
            else:
                directory = pathlib.Path(data_dir if data_dir is not None else DEFAULT_DATA_DIR)
                candidates = [directory / "admin-write.token", directory / "admin-read.token"]
                found = [p for p in candidates if p.exists()]
                if not found:
                    raise FileNotFoundError(
                        f"no admin token in {directory} (admin-write.token or admin-read.token)"
                    )
                token = read_token(found[0])
        self.address = address
        self.timeout = timeout
        self.retry = retry
        self._metadata = (("authorization", f"Bearer {token}"),)
        # No limit on what is received: the rules of a host with a full alias table (20,000
        # pairs of URLs) can exceed any fixed size the frontier's channel uses, and the answers
        # come from the sidecar the operator named, bounded by its rule-set limits.
        self._channel = _channel(address, max_receive=-1)
        self._stub = admin_pb2_grpc.AdminStub(self._channel)

    def _call(self, method: str, request):
        rpc = getattr(self._stub, method)
        return self.retry.run(lambda: rpc(request, timeout=self.timeout, metadata=self._metadata))

    def relearn(self, host: str = "", *, wait: bool = False) -> admin_pb2.RelearnResponse:
        return self._call("Relearn", admin_pb2.RelearnRequest(host=host, wait=wait))

    def job(self, job_id: str) -> admin_pb2.RelearnJob:
        return self._call("GetRelearnJob", admin_pb2.GetRelearnJobRequest(job_id=job_id))

    def rules(self, host: str, *, view: RulesView = RulesView.FULL) -> admin_pb2.GetRulesResponse:
        """The host's live rules, in the forms ``view`` names (both by default)."""
        return self._call("GetRules", admin_pb2.GetRulesRequest(host=host, view=int(view)))

    def hosts(self) -> List[admin_pb2.HostSummary]:
        hosts: List[admin_pb2.HostSummary] = []
        token = ""
        while True:
            page = self._call("ListHosts", admin_pb2.ListHostsRequest(page_size=1000, page_token=token))
            hosts.extend(page.hosts)
            if not page.next_page_token:
                return hosts
            token = page.next_page_token

    def explain(self, url: str) -> admin_pb2.ExplainResponse:
        return self._call("Explain", admin_pb2.ExplainRequest(url=url))

    def stats(self) -> admin_pb2.GetStatsResponse:
        return self._call("GetStats", admin_pb2.GetStatsRequest())

    def rollback(self, host: str, to_version: int = 0) -> admin_pb2.RollbackRulesResponse:
        return self._call("RollbackRules", admin_pb2.RollbackRulesRequest(host=host, to_version=to_version))

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> "Admin":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
