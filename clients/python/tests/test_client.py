"""The typed client against a real sidecar: batching, ingest, admin with generated tokens,
retries and deadlines."""

from __future__ import annotations

import grpc
import pytest

from undust_client import Admin, Decision, Page, Retry, RulesView, Undust, UndustError


def test_canonicalize_answers_the_readme_example_in_batches(sidecar):
    urls = [
        "HTTP://Example.com:80/a/../item?id=7&utm_source=x#top",
        "http://example.com/item?id=7",
        "http://example.com/item?id=8",
        "ftp://example.com/x",
        "http://example.com/item?id=8&PHPSESSID=abcdef0123456789",
    ]
    with Undust(sidecar.address, batch_size=2) as client:
        results = client.canonicalize(urls)
    assert [r.decision for r in results] == [
        Decision.NEW,
        Decision.DUPLICATE,
        Decision.NEW,
        Decision.INVALID,
        Decision.DUPLICATE,
    ]
    assert results[0].canonical == "http://example.com/item?id=7"
    assert results[1].enqueue_url == "http://example.com/item?id=7"
    assert results[3].invalid_reason
    assert [r.url for r in results] == urls


def test_pages_observed_then_relearned_through_the_admin_api_with_the_generated_token(sidecar):
    pages = []
    for item in range(40):
        body = (
            "<html><head><title>Item {0}</title></head><body><nav>Home Shop About</nav>"
            "<article><h1>Item {0}</h1><p>{1}</p></article></body></html>"
        ).format(item, " ".join(f"word{item * 7 + k}" for k in range(60)))
        for variant in ("", "&print=1"):
            pages.append(
                Page(
                    url=f"http://shop.example/item?id={item}{variant}",
                    body=body.encode(),
                    content_type="text/html; charset=utf-8",
                    server_ip="127.0.0.1",
                )
            )
    with Undust(sidecar.address) as client:
        summary = client.observe(pages)
    assert summary.received == len(pages)
    assert summary.rejected == 0
    assert summary.accepted == len(pages)

    with Admin(sidecar.admin_address, data_dir=sidecar.data_dir) as admin:
        stats = admin.stats()
        assert stats.pages_observed == len(pages)
        relearned = admin.relearn("shop.example", wait=True)
        assert relearned.job.hosts[0].host == "shop.example"
        assert relearned.job.hosts[0].rules_version == 1, relearned
        assert admin.job(relearned.job_id).job_id == relearned.job_id
        rules = admin.rules("shop.example")
        assert rules.version == 1
        assert len(rules.rules) + len(rules.site_rules) > 0
        assert rules.rules_json
        rule_file = admin.rules("shop.example", view=RulesView.RULE_FILE)
        assert rule_file.rules_json == rules.rules_json
        assert not rule_file.rules and not rule_file.site_rules
        fields = admin.rules("shop.example", view=RulesView.STRUCTURED)
        assert not fields.rules_json and fields.rules == rules.rules
        hosts = {h.host: h for h in admin.hosts()}
        assert hosts["shop.example"].pages_observed == len(pages)
        explained = admin.explain("http://shop.example/item?id=3&print=1")
        assert explained.canonical == "http://shop.example/item?id=3", explained
        with pytest.raises(UndustError) as refused:
            admin.rollback("shop.example")
        assert refused.value.code == grpc.StatusCode.FAILED_PRECONDITION

    with Undust(sidecar.address) as client:
        a, b = client.canonicalize(
            ["http://shop.example/item?id=5", "http://shop.example/item?id=5&print=1"]
        )
    assert a.is_new and b.is_duplicate


def test_a_read_token_cannot_relearn(sidecar):
    with Admin(sidecar.admin_address, token_file=sidecar.data_dir / "admin-read.token") as admin:
        admin.stats()
        with pytest.raises(UndustError) as denied:
            admin.relearn()
        assert denied.value.code == grpc.StatusCode.PERMISSION_DENIED


def test_retries_back_off_on_resource_exhausted_and_unavailable_only():
    class Failing(grpc.RpcError):
        def __init__(self, code):
            self._code = code

        def code(self):
            return self._code

        def details(self):
            return "busy"

    calls = []
    sleeps = []

    def flaky():
        calls.append(1)
        if len(calls) < 3:
            raise Failing(grpc.StatusCode.RESOURCE_EXHAUSTED if len(calls) == 1 else grpc.StatusCode.UNAVAILABLE)
        return "ok"

    retry = Retry(attempts=5, initial=0.1, maximum=0.15)
    assert retry.run(flaky, sleep=sleeps.append) == "ok"
    assert len(calls) == 3 and len(sleeps) == 2
    assert 0 <= sleeps[0] <= 0.1 and 0 <= sleeps[1] <= 0.15

    def invalid():
        raise Failing(grpc.StatusCode.INVALID_ARGUMENT)

    sleeps.clear()
    with pytest.raises(UndustError) as err:
        retry.run(invalid, sleep=sleeps.append)
    assert err.value.code == grpc.StatusCode.INVALID_ARGUMENT and not sleeps

    def always_busy():
        raise Failing(grpc.StatusCode.RESOURCE_EXHAUSTED)

    with pytest.raises(UndustError) as err:
        retry.run(always_busy, sleep=sleeps.append)
    assert err.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED and len(sleeps) == 4


def test_an_unreachable_sidecar_fails_within_the_deadline():
    from conftest import free_port

    with Undust(f"127.0.0.1:{free_port()}", timeout=0.5, retry=Retry(attempts=2, initial=0.01)) as client:
        with pytest.raises(UndustError) as err:
            client.canonicalize(["http://example.com/"])
    assert err.value.code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


def test_a_batch_whose_answer_was_lost_is_retried_and_still_answered_new(sidecar):
    class Lost(grpc.RpcError):
        def code(self):
            return grpc.StatusCode.UNAVAILABLE

        def details(self):
            return "connection reset after the server answered"

    urls = ["http://lost-answer.example/a", "http://lost-answer.example/b"]
    with Undust(sidecar.address, retry=Retry(attempts=3, initial=0.01)) as client:
        real = client._canonicalizer.Canonicalize
        requests = []

        def answer_then_lose_the_first(request, **kwargs):
            requests.append(request)
            response = real(request, **kwargs)
            if len(requests) == 1:
                raise Lost()
            return response

        client._canonicalizer.Canonicalize = answer_then_lose_the_first
        results = client.canonicalize(urls)
    assert len(requests) == 2, "the batch was retried once"
    assert requests[0].request_id and requests[0].request_id == requests[1].request_id
    # The first attempt recorded both URLs; the retry under the same id gets its answer back.
    assert [r.decision for r in results] == [Decision.NEW, Decision.NEW]
