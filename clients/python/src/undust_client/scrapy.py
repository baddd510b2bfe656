"""Scrapy integration: ask undust before fetching, tell undust what was fetched.

Settings (``settings.py``)::

    DUPEFILTER_CLASS = "undust_client.scrapy.UndustDupeFilter"
    EXTENSIONS = {"undust_client.scrapy.UndustIngest": 500}
    UNDUST_ADDRESS = "127.0.0.1:50051"

- ``UndustDupeFilter`` first applies Scrapy's own fingerprint check (an exact repeat costs no
  call), then asks undust about the request's URL: a DUPLICATE canonical form is not scheduled.
  When undust cannot be asked (down, out of retries) the fingerprint check alone decides and the
  request is counted (``undust/dupefilter/fallback``), so a sidecar outage never stops the crawl.
- ``UndustIngest`` queues every response (bounded: ``UNDUST_INGEST_QUEUE``) and a background
  thread streams them to ``Ingest.ObservePages`` in batches; a full queue drops the page and
  counts it (``undust/ingest/dropped``) instead of blocking the crawl. It reports the URL first
  requested (before redirects), the final URL, the status, the Content-Type, the body and the
  server IP. On close it flushes for at most ``UNDUST_INGEST_FLUSH_TIMEOUT`` seconds.

Other settings: ``UNDUST_TIMEOUT`` (seconds per call, default 5), ``UNDUST_RETRIES`` (tries per
call, default 3), ``UNDUST_INGEST_BATCH`` (pages per stream, default 64).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from typing import List, Optional

from scrapy import signals
from scrapy.dupefilters import RFPDupeFilter
from scrapy.exceptions import NotConfigured

from .client import DEFAULT_ADDRESS, Page, Retry, Undust, UndustError

logger = logging.getLogger(__name__)


def _client(settings) -> Undust:
    return Undust(
        settings.get("UNDUST_ADDRESS", DEFAULT_ADDRESS),
        timeout=settings.getfloat("UNDUST_TIMEOUT", 5.0),
        retry=Retry(attempts=settings.getint("UNDUST_RETRIES", 3)),
    )


class UndustDupeFilter(RFPDupeFilter):
    """A request is seen when undust says its URL's canonical form is a DUPLICATE."""

    def __init__(self, *args, undust: Optional[Undust] = None, stats=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.undust = undust
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler):
        dupefilter = super().from_crawler(crawler)
        dupefilter.undust = _client(crawler.settings)
        dupefilter.stats = crawler.stats
        return dupefilter

    def _inc(self, key: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(key)

    def request_seen(self, request) -> bool:
        # An exact repeat by Scrapy's own fingerprint (which already ignores parameter order and
        # fragments) needs no round trip; the fingerprint is recorded either way, which is also
        # the fallback when undust cannot answer.
        if super().request_seen(request):
            return True
        if self.undust is None:
            return False
        try:
            (result,) = self.undust.canonicalize([request.url])
        except UndustError as err:
            self._inc("undust/dupefilter/fallback")
            logger.warning("undust unavailable, using Scrapy's fingerprint for %s: %s", request.url, err)
            return False
        if result.is_duplicate:
            self._inc("undust/dupefilter/duplicate")
            return True
        # NEW, or INVALID (undust cannot judge it, Scrapy's fingerprint decided).
        self._inc("undust/dupefilter/new" if result.is_new else "undust/dupefilter/invalid")
        return False

    def close(self, reason: str) -> None:
        if self.undust is not None:
            self.undust.close()
        super().close(reason)


_STOP = object()


class UndustIngest:
    """Streams fetched responses to undust in the background, never blocking the crawl."""

    def __init__(self, undust: Undust, stats, *, capacity: int, batch: int, flush_timeout: float):
        self.undust = undust
        self.stats = stats
        self.batch = max(1, batch)
        self.flush_timeout = flush_timeout
        self.queue: "queue.Queue[object]" = queue.Queue(maxsize=max(1, capacity))
        self.thread = threading.Thread(target=self._drain, name="undust-ingest", daemon=True)
        self.thread.start()

    @classmethod
    def from_crawler(cls, crawler):
        settings = crawler.settings
        if not settings.getbool("UNDUST_INGEST_ENABLED", True):
            raise NotConfigured("UNDUST_INGEST_ENABLED is off")
        extension = cls(
            _client(settings),
            crawler.stats,
            capacity=settings.getint("UNDUST_INGEST_QUEUE", 1000),
            batch=settings.getint("UNDUST_INGEST_BATCH", 64),
            flush_timeout=settings.getfloat("UNDUST_INGEST_FLUSH_TIMEOUT", 30.0),
        )
        crawler.signals.connect(extension.response_received, signal=signals.response_received)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    @staticmethod
    def page_of(response, request) -> Page:
        """What undust needs to know about one response."""
        redirects = request.meta.get("redirect_urls") or []
        requested = redirects[0] if redirects else request.url
        final_url = response.url if response.url != requested else ""
        content_type = response.headers.get(b"Content-Type", b"") or b""
        ip = getattr(response, "ip_address", None)
        return Page(
            url=requested,
            final_url=final_url,
            http_status=int(response.status),
            content_type=content_type.decode("latin-1"),
            body=bytes(response.body),
            server_ip=str(ip) if ip is not None else "",
        )

    def response_received(self, response, request, spider) -> None:
        try:
            self.queue.put_nowait(self.page_of(response, request))
            self.stats.inc_value("undust/ingest/queued")
        except queue.Full:
            self.stats.inc_value("undust/ingest/dropped")

    def _drain(self) -> None:
        stop = False
        while not stop:
            item = self.queue.get()
            pages: List[Page] = []
            if item is _STOP:
                stop = True
            else:
                pages.append(item)  # type: ignore[arg-type]
            while len(pages) < self.batch:
                try:
                    item = self.queue.get_nowait()
                except queue.Empty:
                    break
                if item is _STOP:
                    stop = True
                    break
                pages.append(item)  # type: ignore[arg-type]
            if pages:
                self._send(pages)

    def _send(self, pages: List[Page]) -> None:
        try:
            summary = self.undust.observe(pages)
        except UndustError as err:
            self.stats.inc_value("undust/ingest/failed", len(pages))
            logger.warning("undust ingest failed for %d pages: %s", len(pages), err)
            return
        self.stats.inc_value("undust/ingest/sent", summary.received)
        self.stats.inc_value("undust/ingest/sampled", summary.sampled)
        if summary.rejected:
            self.stats.inc_value("undust/ingest/rejected", summary.rejected)

    def spider_closed(self, spider) -> None:
        deadline = time.monotonic() + self.flush_timeout
        while True:
            try:
                self.queue.put(_STOP, timeout=max(0.01, deadline - time.monotonic()))
                break
            except queue.Full:
                if time.monotonic() >= deadline:
                    break
        self.thread.join(max(0.0, deadline - time.monotonic()))
        if self.thread.is_alive():
            logger.warning("undust ingest did not flush within %.0f s", self.flush_timeout)
        self.undust.close()
