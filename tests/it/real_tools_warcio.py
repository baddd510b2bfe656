import sys, http.client
from warcio.capture_http import capture_http
from warcio.warcwriter import WARCWriter
port, out = int(sys.argv[1]), sys.argv[2]
with open(out, "wb") as fh:
    writer = WARCWriter(fh, gzip=True)
    with capture_http(writer):
        for path in ["/", "/old", "/chunked", "/page?id=1"]:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            c.request("GET", path); c.getresponse().read(); c.close()
    base = "http://127.0.0.1:%d" % port
    rec = writer.create_revisit_record(base + "/index.html", "sha1:CMSYX3E4HZ2Q27T7PDYJ2RNSAEAUN7RP", base + "/", "2026-11-23T15:00:00Z")
    writer.write_record(rec)
