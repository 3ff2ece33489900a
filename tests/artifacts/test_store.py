"""The content-addressed store: raw bytes by sha256, immutable records, derivation, no eviction."""
from __future__ import annotations

import hashlib

import pytest

from artifacts import Record, Store, StoreError, canonical_json, derivation


@pytest.fixture
def store(tmp_path) -> Store:
    s = Store(tmp_path / "store")
    yield s
    s.close()


def test_put_get_roundtrip_by_sha256(store):
    data = b"\x7fELF" + bytes(range(256)) * 300  # larger than diskcache's inline limit
    sha = store.put(data)
    assert sha == hashlib.sha256(data).hexdigest()
    assert store.get(sha) == data
    assert store.put(data) == sha and len(store.blobs) == 1


def test_values_are_raw_bytes_and_never_evicted(store):
    sha = store.put(b"abc")
    assert type(store.blobs.get(sha)) is bytes
    assert store.blobs.eviction_policy == "none"
    assert store.blobs.size_limit >= 2**40


def test_rejects_non_bytes(store):
    with pytest.raises(TypeError):
        store.put({"a": 1})


def test_missing_and_corrupt_blobs_are_errors(store):
    with pytest.raises(StoreError, match="not in the store"):
        store.get("0" * 64)
    sha = store.put(b"good")
    store.blobs.set(sha, b"evil", retry=True)
    with pytest.raises(StoreError, match="corrupt"):
        store.get(sha)
    assert store.check() == [f"blob {sha[:16]}: sha256 mismatch"]


def test_json_is_canonical(store):
    assert store.put_json({"b": 1, "a": [1, 2]}) == store.put_json({"a": [1, 2], "b": 1})
    assert canonical_json({"b": 1, "a": 2}) == b'{"a":2,"b":1}'


def test_first_record_of_an_artifact_stays(store):
    sha = store.put(b"x")
    first = store.add_record(Record(kind="k", sha256=sha, stage="s", config={"n": 1}))
    again = store.add_record(Record(kind="k", sha256=sha, stage="s", config={"n": 2}))
    assert again == first and store.record(sha).config == {"n": 1}
    with pytest.raises(StoreError):
        store.add_record(Record(kind="k", sha256="f" * 64, stage="s"))


def test_lineage_is_the_derivation_tree(store):
    k0 = store.put(b"k0")
    store.add_record(Record(kind="code_object", sha256=k0, stage="input"))
    rec = store.put(b"src")
    store.add_record(Record(kind="recovered", sha256=rec, stage="recover", inputs={"k0": k0}))
    external = store.put(b"launch")
    built = store.put(b"k1")
    store.add_record(Record(kind="code_object", sha256=built, stage="rebuild",
                            inputs={"source": rec, "launch": external}))
    tree = derivation(store, built)
    assert tree.record.stage == "rebuild"
    assert tree.inputs["source"].inputs["k0"].record.stage == "input"
    assert tree.inputs["launch"] is None
    assert tree.to_dict()["inputs"]["source"]["inputs"]["k0"]["sha256"] == k0


def test_a_reference_keeps_the_first_artifact_it_named(store):
    first, second = store.put(b"first reply"), store.put(b"second reply")
    assert store.ref("llm-reply/abc") is None
    assert store.set_ref("llm-reply/abc", first) == first
    assert store.set_ref("llm-reply/abc", second) == first  # a racing writer gets the kept one back
    assert store.ref("llm-reply/abc") == first
    with pytest.raises(StoreError, match="not in the store"):
        store.set_ref("llm-reply/def", "0" * 64)
    assert store.check() == []


def test_expansions_are_stored_per_request_and_code_version(store):
    from artifacts.expansions import ExpansionStore

    request = {"kind": "search_expansion", "source": "ab" * 32, "random": "cd" * 32}
    entry = {"proposals": [{"predicted": 1.5, "operator": "fill_nop", "site": 3, "note": "n",
                            "change": {"keep": [2, 1], "lines": ["\ts_nop 0"]}}]}
    mine, other = ExpansionStore(store, "v1"), ExpansionStore(store, "v2")
    assert mine.get(request) is None
    assert mine.put(request, entry) == entry and mine.get(request) == entry
    assert other.get(request) is None and mine.get({**request, "random": "ef" * 32}) is None
    assert mine.put(request, {"proposals": []}) == entry  # the first stored stays
    assert (mine.calls, mine.hits, other.calls, other.hits) == (3, 1, 1, 0)  # what a suite run reports
