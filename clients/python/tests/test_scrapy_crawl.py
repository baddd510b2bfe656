"""Proof on a real crawl: PyPI's Scrapy crawls a loopback site full of DUST, once with Scrapy's
defaults and once with undust's dupefilter and ingest extension, and undust saves requests and
duplicate fetches without losing a distinct page."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import start_sidecar, stop_sidecar
from dust_site import DustSite
from undust_client import Admin

CRAWL = Path(__file__).with_name("dust_crawl.py")


@pytest.fixture
def site():
    running = DustSite()
    yield running
    running.close()


def crawl(site: DustSite, out: Path, address: str | None = None) -> dict:
    args = [sys.executable, str(CRAWL), f"http://{site.main}/", str(out)]
    if address:
        args.append(address)
    before = len(site.requests)
    subprocess.run(args, check=True, timeout=300)
    result = json.loads(out.read_text())
    result["requests"] = len(site.requests) - before
    pages = [f["page"] for f in result["fetched"]]
    result["distinct"] = set(pages)
    result["duplicates"] = len(pages) - len(set(pages))
    return result


def test_undust_saves_requests_and_duplicate_fetches_without_losing_a_page(site, tmp_path):
    plain = crawl(site, tmp_path / "plain.json")
    sidecar = start_sidecar(
        tmp_path / "data", "--relearn-min-new-samples", "20", "--relearn-interval-secs", "1"
    )
    try:
        undust = crawl(site, tmp_path / "undust.json", sidecar.address)
        with Admin(sidecar.admin_address, data_dir=sidecar.data_dir) as admin:
            stats = admin.stats()
    finally:
        stop_sidecar(sidecar)

    every_page = DustSite.distinct_pages()
    print(
        f"\nplain Scrapy: {plain['requests']} requests, {plain['duplicates']} duplicate pages, "
        f"{len(plain['distinct'])} distinct; with undust: {undust['requests']} requests, "
        f"{undust['duplicates']} duplicate pages, {len(undust['distinct'])} distinct; "
        f"undust suppressed {stats.duplicates_suppressed}"
    )
    # Nothing lost: both crawls reach every distinct page of the site.
    assert plain["distinct"] == every_page
    assert undust["distinct"] == every_page
    # The site's DUST is real for plain Scrapy (its fingerprint only ignores parameter order).
    assert plain["duplicates"] >= 400, plain["duplicates"]
    # Static normalization alone (session ids, tracking parameters, path case is not among them)
    # removes more than 40% of the requests; learned rules can only add to that.
    assert undust["requests"] <= 0.6 * plain["requests"], (undust["requests"], plain["requests"])
    assert undust["duplicates"] <= 0.5 * plain["duplicates"], (undust["duplicates"], plain["duplicates"])
    # Every response reached undust's ingest, none dropped; the dupefilter asked undust.
    assert undust["stats"].get("undust/ingest/sent") == undust["requests"]
    assert "undust/ingest/dropped" not in undust["stats"]
    assert undust["stats"].get("undust/dupefilter/fallback") is None
    assert stats.pages_observed == undust["requests"]
    assert stats.duplicates_suppressed == undust["stats"]["undust/dupefilter/duplicate"]
