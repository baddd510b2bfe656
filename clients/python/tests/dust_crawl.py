"""A plain Scrapy crawl of a site, run as its own process (Twisted's reactor runs once per process).

    python dust_crawl.py START_URL OUT.json [UNDUST_ADDRESS]

With an undust address the crawl uses ``UndustDupeFilter`` and ``UndustIngest``; without, Scrapy's
defaults. Writes the pages fetched (with the content each carried) and the crawl's stats.
"""

import json
import sys

import scrapy
from scrapy.crawler import CrawlerProcess


class SiteSpider(scrapy.Spider):
    name = "site"

    def __init__(self, start, fetched, **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [start]
        self.fetched = fetched

    def parse(self, response):
        self.fetched.append({
            "url": response.url,
            "status": response.status,
            "page": response.css("main::attr(data-page)").get(),
        })
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, callback=self.parse)


def main():
    start, out = sys.argv[1], sys.argv[2]
    address = sys.argv[3] if len(sys.argv) > 3 else None
    settings = {
        "LOG_LEVEL": "WARNING",
        "ROBOTSTXT_OBEY": False,
        "TELNETCONSOLE_ENABLED": False,
        "CONCURRENT_REQUESTS": 4,
        "DEPTH_LIMIT": 10,
        "CLOSESPIDER_PAGECOUNT": 2000,  # a bound, never reached by the site
        "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
    }
    if address:
        settings.update({
            "DUPEFILTER_CLASS": "undust_client.scrapy.UndustDupeFilter",
            "EXTENSIONS": {"undust_client.scrapy.UndustIngest": 500},
            "UNDUST_ADDRESS": address,
        })
    fetched = []
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(SiteSpider)
    process.crawl(crawler, start=start, fetched=fetched)
    process.start()
    stats = {k: v for k, v in crawler.stats.get_stats().items() if isinstance(v, (int, float))}
    with open(out, "w") as f:
        json.dump({"fetched": fetched, "stats": stats}, f)


if __name__ == "__main__":
    main()
