"""The Scrapy pieces without a crawl: what a response becomes, a full queue never blocks, and
the dupefilter falls back to Scrapy's fingerprint when undust is unreachable."""

from __future__ import annotations

import ipaddress
import threading

from scrapy.http import HtmlResponse, Request
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler

from conftest import free_port
from undust_client import Retry, Undust
from undust_client.scrapy import UndustDupeFilter, UndustIngest


def test_a_redirected_response_reports_the_requested_and_final_urls():
    request = Request("http://b.example/new", meta={"redirect_urls": ["http://b.example/old"]})
    response = HtmlResponse(
        "http://b.example/new",
        status=200,
        headers={"Content-Type": "text/html; charset=utf-8"},
        body=b"<html>hi</html>",
        request=request,
        ip_address=ipaddress.ip_address("127.0.0.1"),
    )
    page = UndustIngest.page_of(response, request)
    assert page.url == "http://b.example/old"
    assert page.final_url == "http://b.example/new"
    assert page.http_status == 200
    assert page.content_type == "text/html; charset=utf-8"
    assert page.body == b"<html>hi</html>"
    assert page.server_ip == "127.0.0.1"
    plain = Request("http://b.example/x")
    page = UndustIngest.page_of(HtmlResponse("http://b.example/x", body=b"", request=plain), plain)
    assert page.url == "http://b.example/x" and page.final_url == ""


class BlockedClient:
    """An ingest client stuck in a call until released."""

    def __init__(self):
        self.release = threading.Event()
        self.sent = 0

    def observe(self, pages):
        self.release.wait(30)
        self.sent += len(pages)
        from undust_client._pb import ingest_pb2

        return ingest_pb2.ObservePagesSummary(received=len(pages), sampled=len(pages))

    def close(self):
        pass


def test_a_full_queue_drops_and_counts_instead_of_blocking_the_crawl():
    client = BlockedClient()
    stats = MemoryStatsCollector(get_crawler())
    ingest = UndustIngest(client, stats, capacity=5, batch=2, flush_timeout=10)
    request = Request("http://c.example/")
    response = HtmlResponse("http://c.example/", body=b"<html></html>", request=request)
    for _ in range(50):
        ingest.response_received(response, request, spider=None)  # never waits
    dropped = stats.get_value("undust/ingest/dropped")
    queued = stats.get_value("undust/ingest/queued")
    assert queued + dropped == 50
    # At most the queue's capacity plus the batch the blocked sender holds got in.
    assert queued <= 5 + 2 and dropped >= 43
    client.release.set()
    ingest.spider_closed(spider=None)
    assert client.sent == queued
    assert stats.get_value("undust/ingest/sent") == queued
    assert not ingest.thread.is_alive()


def test_the_dupefilter_falls_back_to_scrapys_fingerprint_when_undust_is_down():
    crawler = get_crawler(settings_dict={"UNDUST_ADDRESS": f"127.0.0.1:{free_port()}"})
    dupefilter = UndustDupeFilter.from_crawler(crawler)
    dupefilter.undust = Undust(
        crawler.settings["UNDUST_ADDRESS"], timeout=0.5, retry=Retry(attempts=1)
    )
    assert dupefilter.request_seen(Request("http://d.example/a?utm_source=x")) is False
    assert dupefilter.request_seen(Request("http://d.example/a?utm_source=x")) is True
    assert crawler.stats.get_value("undust/dupefilter/fallback") == 1
    dupefilter.close("finished")
