"""A small website with the DUST real sites have, served on loopback.

Thirty articles, a home page and three section pages. Every article is reachable under many URLs:
session ids (``sid=<token>``, ``PHPSESSID``), tracking parameters (``utm_*``), a print view
(``print=1``, the same text without navigation), parameter order, case variants of the path, and
a mirror host (the same site on 127.0.0.2). Each page carries ``data-page`` naming its content, so a
crawl can count distinct pages and duplicates fetched.
"""

from __future__ import annotations

import hashlib
import html
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

ARTICLES = 30
SECTIONS = 3
WORDS = ["river", "harbour", "council", "budget", "village", "engine", "orchard", "ledger",
         "winter", "market", "signal", "bridge", "canvas", "rocket", "garden", "silver",
         "thunder", "meadow", "library", "tunnel", "lantern", "compass", "factory", "glacier"]


def prose(seed: int, words: int = 180) -> str:
    out = []
    state = seed * 2654435761 + 12345
    for _ in range(words):
        state = (state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        out.append(WORDS[(state >> 33) % len(WORDS)])
    return " ".join(out)


def sid(seed: str) -> str:
    return hashlib.sha1(seed.encode()).hexdigest()[:24]


def article_links(k: int, here: str) -> list:
    """Links an article page has to its neighbours, each in a different DUST form."""
    n = lambda d: (k + d) % ARTICLES
    return [
        f"/article?id={n(1)}",
        f"/article?id={n(2)}&sid={sid(here + 'a')}",
        f"/article?id={n(3)}&utm_source=related&utm_medium=web",
        f"/article?id={n(4)}&print=1",
        f"/Article?id={n(5)}",
        f"/article?lang=en&id={n(6)}",
        f"/article?id={n(6)}&lang=en",
        f"/article?id={n(7)}&PHPSESSID={sid(here + 'b')}",
    ]


def page(content: str, title: str, text: str, links: list, printable: bool = False) -> bytes:
    nav = "" if printable else (
        '<nav><a href="/">Home</a> ' + " ".join(
            f'<a href="/section?s={s}">Section {s}</a>' for s in range(SECTIONS)) + "</nav>"
    )
    body = (
        f"<!doctype html><html><head><title>{html.escape(title)}</title></head><body>{nav}"
        f'<main data-page="{content}"><h1>{html.escape(title)}</h1><p>{text}</p></main>'
        + "<ul>" + "".join(f'<li><a href="{html.escape(l)}">more</a></li>' for l in links) + "</ul>"
        + ("" if printable else "<footer>Loopback Gazette, all rights reserved</footer>")
        + "</body></html>"
    )
    return body.encode()


def render(path: str, query: dict, host: str, mirror: str):
    """(status, body) for a request; paths are case-insensitive, as on many servers."""
    path = path.lower()
    if path == "/":
        links = [f"/article?id={k}" for k in range(0, ARTICLES, 2)]
        links += [f"/section?s={s}&sid={sid('home' + str(s))}" for s in range(SECTIONS)]
        links += [f"http://{mirror}/article?id={k}" for k in range(0, ARTICLES, 5)]
        return 200, page("home", "Loopback Gazette", prose(999), links)
    if path == "/section" and query.get("s", "").isdigit() and int(query["s"]) < SECTIONS:
        s = int(query["s"])
        links = [f"/article?id={k}&utm_source=section{s}" for k in range(s, ARTICLES, SECTIONS)]
        return 200, page(f"section-{s}", f"Section {s}", prose(500 + s), links)
    if path == "/article" and query.get("id", "").isdigit() and int(query["id"]) < ARTICLES:
        k = int(query["id"])
        printable = query.get("print") == "1"
        # Session ids are per page, not per request, so the site is finite (no spider trap).
        links = article_links(k, f"article-{k}")
        return 200, page(f"article-{k}", f"Article {k}", prose(k), links, printable)
    return 404, b"<html><body>not found</body></html>"


class DustSite:
    """The site on 127.0.0.1:PORT and its mirror on 127.0.0.2:PORT, in background threads."""

    def __init__(self):
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                parts = urlsplit(self.path)
                host = self.headers.get("Host", "")
                mirror = site.mirror if host != site.mirror else site.main
                status, body = render(parts.path, dict(parse_qsl(parts.query)), host, mirror)
                with site.lock:
                    site.requests.append(f"http://{host}{self.path}")
                self.send_response(status)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.lock = threading.Lock()
        self.requests: list = []
        self.servers = [ThreadingHTTPServer(("127.0.0.1", 0), Handler)]
        port = self.servers[0].server_address[1]
        self.servers.append(ThreadingHTTPServer(("127.0.0.2", port), Handler))
        self.main = f"127.0.0.1:{port}"
        self.mirror = f"127.0.0.2:{port}"
        self.threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in self.servers]
        for thread in self.threads:
            thread.start()

    @staticmethod
    def distinct_pages() -> set:
        return {"home"} | {f"section-{s}" for s in range(SECTIONS)} | {
            f"article-{k}" for k in range(ARTICLES)}

    def close(self):
        for server in self.servers:
            server.shutdown()
            server.server_close()
