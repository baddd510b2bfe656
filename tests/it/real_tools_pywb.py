"""pywb, the replay system many web archives run, and py-wacz, over one WARC.

Usage: real_tools_pywb.py BIN_DIR WARC HOST:PORT OUT_DIR

Writes to OUT_DIR what a user of these tools has: pywb's indexer's files (pywb.cdx, 11 fields
with a header; pywb9.cdx, 9 fields; pywb.cdxj), its CDX server's answers for every capture under
HOST:PORT (server.json for `output=json`, server.cdxj for the default answer), and the WARC
packaged by py-wacz (crawl.wacz). The server runs on a loopback port and is stopped before this
exits. BIN_DIR holds the tools (empty: the PATH's).
"""
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

bin_dir, warc, site, out = sys.argv[1:5]
work = tempfile.mkdtemp()
quiet = {"cwd": work, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}


def tool(name):
    return os.path.join(bin_dir, name) if bin_dir else name


def run(*args):
    subprocess.run(args, check=True, timeout=120, **quiet)


run(tool("cdx-indexer"), "-o", os.path.join(out, "pywb.cdx"), warc)
run(tool("cdx-indexer"), "-9", "-o", os.path.join(out, "pywb9.cdx"), warc)
run(tool("cdx-indexer"), "-j", "-o", os.path.join(out, "pywb.cdxj"), warc)
run(tool("wacz"), "create", "-o", os.path.join(out, "crawl.wacz"), warc)
run(tool("wb-manager"), "init", "crawl")
run(tool("wb-manager"), "add", "crawl", warc)

probe = socket.socket()
probe.bind(("127.0.0.1", 0))
port = probe.getsockname()[1]
probe.close()
server = subprocess.Popen([tool("wayback"), "-b", "127.0.0.1", "-p", str(port)], **quiet)
# Loopback only: no proxy from the environment.
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
query = f"http://127.0.0.1:{port}/crawl/cdx?url={site}/*"
try:
    deadline = time.time() + 60
    while True:
        try:
            opener.open(query, timeout=5).read()
            break
        except OSError:
            if time.time() > deadline or server.poll() is not None:
                sys.exit("pywb's server did not answer within 60 s")
            time.sleep(0.2)
    for suffix, name in (("&output=json", "server.json"), ("", "server.cdxj")):
        with opener.open(query + suffix, timeout=30) as answer:
            with open(os.path.join(out, name), "wb") as file:
                file.write(answer.read())
finally:
    server.terminate()
    server.wait(timeout=30)
