"""``annotator judge run`` against a local server that speaks the chat-completions protocol (tests/judge_server.py,
a stand-in for a model): k samples as vote fractions, the prompt it sends, backoff on 429 and 5xx, unparsable
answers counted and asked again, a refused request, the API key never shown, answers reused on a second run.
(Resuming after ``kill -9``: tests/reliability/test_judge_run_kill.py.)"""

from __future__ import annotations

import json

import pytest

from annotator.errors import InputError
from annotator.judges import load_judge
from annotator.judges.prompt import Answer, Unparsable, aggregate, parse_answer
from annotator.judges.runner import RunSettings, run_judge
from annotator.sample import answer_key, load_sample
from annotator.spans import Span
from annotator.store.projects import load_project
from tests.cli_helpers import run_cli as run
from tests.judge_server import StandIn, answer_json


@pytest.fixture
def sample(sqlite_store):
    load_sample(sqlite_store, with_judgements=False)
    return sqlite_store


def captions(store):
    key = answer_key()
    return {c.text: (c.caption_id, key[c.system][c.line]) for it in load_project(store, "sample").items
            for c in it.captions}


def settings(server, **kw):
    return RunSettings(server.url, kw.pop("model", "stand-in-vl"), backoff=kw.pop("backoff", 0.001), **kw)


def test_k_samples_become_vote_fractions(sample):
    truth = captions(sample)
    # caption i's first (i % 4) answers say "accurate", the rest give its true types
    order = {text: i for i, text in enumerate(truth)}

    def answer(caption, seed):
        types = truth[caption][1]
        return answer_json(() if seed < order[caption] % 4 else types)

    with StandIn(answer=answer) as server:
        result = run_judge(sample, "sample", "vlm", settings(server, k=4))
    assert (result.outputs, result.stats.answered, result.stats.requests, result.stats.cached) == (16, 64, 64, 0)
    assert sorted((c, s) for c, s, _ in server.requests) == sorted((t, s) for t in truth for s in range(4))
    judge = load_judge(sample, "sample", "vlm")
    assert judge.signature["model"] == "stand-in-vl" and judge.signature["k"] == 4 and judge.signature["prompt"] == "1"
    for text, (cid, types) in truth.items():
        out = judge.outputs[cid]
        expected = (4 - order[text] % 4) / 4 if types else 0.0
        assert out.p_inaccurate == expected
        assert all(out.types[t] == expected for t in types) and len(out.answers) == 4


def test_the_prompt_carries_the_taxonomy_the_words_the_references_and_the_picture(sample):
    with StandIn() as server:
        run_judge(sample, "sample", "vlm", settings(server, k=1, temperature=0.7), limit=1)
    (body,) = server.bodies
    system, user = body["messages"]
    assert "- gender (Gender; People): A person is described with the wrong gender" in system["content"]
    assert '{"inaccurate": true, "types": ["type_id", ...]' in system["content"]
    text, picture = user["content"]
    assert "Caption: A man in an orange jacket smiling in front of an american flag" in text["text"]
    assert "Caption words: 0:A 1:man 2:in 3:an 4:orange" in text["text"]
    assert "- A smiling woman in an orange space suit poses" in text["text"]
    assert picture["image_url"]["url"].startswith("data:image/jpeg;base64,/9j/")
    assert (body["model"], body["seed"], body["temperature"], body["response_format"]) == \
        ("stand-in-vl", 0, 0.7, {"type": "json_object"})


def test_backs_off_on_429_and_5xx_and_honours_retry_after(sample):
    waits = []
    with StandIn(statuses=[429, 500, 503, 429], retry_after="7") as server:
        result = run_judge(sample, "sample", "vlm", settings(server, k=1, concurrency=1, backoff=0.5), limit=1,
                           sleep=waits.append)
    s = result.stats
    assert (s.retried_429, s.retried_5xx, s.requests, s.answered, s.failed) == (2, 2, 5, 1, 0)
    # the wait doubles from 0.5 s; a 429's Retry-After of 7 s is waited when longer
    assert waits == [7.0, 1.0, 2.0, 7.0]
    assert [status for _, _, status in server.requests] == [429, 500, 503, 429, 200]


def test_unparsable_answers_are_counted_and_asked_again(sample):
    truth = captions(sample)
    hopeless = next(iter(truth))
    with StandIn({t: v[1] for t, v in truth.items()},
                 garbage=lambda caption, seed, attempt: caption == hopeless or (seed == 1 and attempt == 0)) as server:
        result = run_judge(sample, "sample", "vlm", settings(server, k=2, attempts=3))
    s = result.stats
    # 15 captions: sample 1's first answer did not parse, its second did; the hopeless caption never parses
    assert (s.unparsable, s.failed, s.answered) == (15 + 2 * 3, 2, 30)
    assert result.outputs == 15 and hopeless not in {t for t, (c, _) in truth.items()
                                                     if c in load_judge(sample, "sample", "vlm").outputs}
    assert "21 answers that did not parse" in result.describe() and "2 given up" in result.describe()


def test_a_second_run_asks_for_nothing_it_has(sample):
    with StandIn() as server:
        run_judge(sample, "sample", "vlm", settings(server, k=2), limit=5)
        first = len(server.requests)
        again = run_judge(sample, "sample", "vlm", settings(server, k=2))
        assert first == 10 and len(server.requests) == 10 + 22  # only the 11 captions not asked before
        assert (again.stats.cached, again.stats.answered, again.outputs) == (10, 22, 16)
        other = run_judge(sample, "sample", "vlm-2", settings(server, k=2, model="another-model"), limit=1)
        assert other.stats.cached == 0  # answers are kept per model


def test_refused_requests_stop_the_run_and_the_key_is_never_shown(sample, capsys, monkeypatch):
    key = "sk-secret-key-0123456789"
    monkeypatch.setenv("MY_JUDGE_KEY", key)
    with StandIn(statuses=[401]) as server:
        code, out, err = run(capsys, "--db", sample.url, "judge", "run", "--project", "sample", "--judge", "vlm",
                             "--endpoint", server.url, "--model", "m", "--k", "1", "--concurrency", "1",
                             "--api-key-env", "MY_JUDGE_KEY")
    assert code == 2 and "HTTP 401" in err and "refused" in err
    assert key not in out + err
    assert server.headers[0]["Authorization"] == f"Bearer {key}"
    with StandIn() as server:
        code, out, err = run(capsys, "--db", sample.url, "judge", "run", "--project", "sample", "--judge", "vlm",
                             "--endpoint", server.url.replace("http://", "http://user:secret-pw@"), "--model", "m")
        assert code == 2 and "leave credentials out of the URL" in err and "secret-pw" not in err
        code, out, err = run(capsys, "--db", sample.url, "judge", "run", "--project", "sample", "--judge", "vlm",
                             "--endpoint", server.url, "--model", "m", "--k", "1", "--api-key-env", "MY_JUDGE_KEY",
                             "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["outputs"] == 16 and data["signature"]["endpoint"] == server.url and key not in out + err
    assert "16/16 samples" in err  # the progress bar


def test_a_server_that_cannot_be_reached_changes_nothing(sample):
    waits = []
    with StandIn() as server:
        url = server.url
    with pytest.raises(InputError, match="no caption has an answer: 2 samples were given up after 6 requests"):
        run_judge(sample, "sample", "vlm", RunSettings(url, "m", k=2, attempts=3, backoff=0.25), limit=1,
                  sleep=waits.append)
    assert sorted(waits) == [0.25, 0.25, 0.5, 0.5]  # no wait after the last try
    from annotator.judges import judge_names
    assert judge_names(sample, "sample") == ["detectors"]


@pytest.mark.parametrize("argv, message", [
    (["--endpoint", "ftp://x"], "--endpoint: an http(s) URL"),
    (["--k", "0"], "--k: must be a whole number from 1"),
    (["--temperature", "3"], "--temperature"),
    (["--limit", "0"], "--limit"),
    (["--judge", "detectors"], "built-in detectors' name"),
    (["--system", "nope"], "no system 'nope'"),
])
def test_bad_settings_are_named(sample, capsys, argv, message):
    base = {"--judge": "vlm", "--endpoint": "http://127.0.0.1:9/v1", "--model": "m"}
    for flag, value in zip(argv[::2], argv[1::2]):
        base[flag] = value
    code, _, err = run(capsys, "--db", sample.url, "judge", "run", "--project", "sample",
                       *[x for kv in base.items() for x in kv])
    assert code == 2 and message in err


def test_answers_parse_strictly():
    caption = "A man in a red shirt"
    ok = parse_answer('```json\n{"inaccurate": true, "types": ["Gender"], "spans": [{"start": 1, "end": 2, '
                      '"type": "gender", "fix": "woman"}]}\n```', caption)
    assert ok == Answer(True, ("gender",), (Span(1, 2, "gender", "woman"),))
    for bad in ("fine", '{"inaccurate": "yes"}', '{"inaccurate": true, "types": []}',
                '{"inaccurate": false, "types": ["gender"]}', '{"inaccurate": true, "types": ["colr"]}',
                '{"inaccurate": true, "types": ["gender"], "spans": [{"start": 4, "end": 9, "type": "gender"}]}',
                '{"inaccurate": true, "types": ["gender"], "spans": [{"start": 0, "end": 1, "type": "color"}]}',
                '{"inaccurate": true, "inaccurate": true, "types": ["gender"]}', '{"inaccurate": NaN}'):
        with pytest.raises(Unparsable):
            parse_answer(bad, caption)


def test_spans_most_answers_mark_are_kept():
    g = "gender"
    answers = [Answer(True, (g,), (Span(1, 3, g, "woman"),)), Answer(True, (g,), (Span(1, 2, g, "woman"),)),
               Answer(True, (g,), (Span(1, 3, g, "lady"),)), Answer(False, (), ()), Answer(True, ("color",), ())]
    out = aggregate(7, "A young man in a red shirt", answers, ["r"] * 5)
    assert out.p_inaccurate == 0.8 and out.types[g] == 0.6 and out.types["color"] == 0.2
    # word 1 is marked by 3 of 5 answers, word 2 by 2: only word 1 is kept, with the fix given for exactly it
    assert out.spans == (Span(1, 2, g, "woman"),)
    with pytest.raises(InputError):
        RunSettings("http://127.0.0.1/v1", " ")


def test_captions_without_a_readable_picture_are_counted(sample, tmp_path):
    from annotator.store.projects import project_id
    from annotator.store.schema import items
    from sqlalchemy import update
    with sample.transaction() as conn:  # one picture gone from the disk, one item without a picture recorded
        pid = project_id(conn, "sample")
        conn.execute(update(items).where(items.c.project_id == pid, items.c.key == "astronaut.jpg")
                     .values(image_path="missing.jpg"))
        conn.execute(update(items).where(items.c.project_id == pid, items.c.key == "rocket.jpg")
                     .values(image_path=None))
    with StandIn() as server:
        result = run_judge(sample, "sample", "vlm", settings(server, k=1))
    assert result.stats.without_picture == 4  # two items, two systems each
    sent = [part for b in server.bodies for part in b["messages"][1]["content"]]
    assert sum(1 for p in sent if p["type"] == "image_url") == 12
    assert "4 captions were asked about without a picture" in result.describe()
