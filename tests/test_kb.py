"""Knowledge base: corpus validity, heading-aware chunking, build, retrieval, failures.

The ``kb``-marked tests use the real bundled MiniLM model and real embedded Qdrant
stores under ``tmp_path``; the full shipped corpus is built once per module.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from kb_builder import CorpusError, KnowledgeBase, KnowledgeBaseUnavailable, build_kb
from kb_builder.chunking import chunk_document
from kb_builder.documents import load_documents, parse_document
from kb_builder.paths import builtin_corpus_dir
from mlflow_deepfix.schemas import CATEGORIES, CONTRACT_CATEGORIES

# ------------------------------------------------------------------ corpus (no model)


def test_every_category_has_its_document_and_front_matter_is_valid():
    docs = load_documents()
    ids = [d.id for d in docs]
    assert len(ids) == len(set(ids)), "document ids must be unique"
    for category in CATEGORIES:
        assert category in ids, f"no document with id {category!r}"
        assert category in next(d for d in docs if d.id == category).categories
    for doc in docs:
        assert set(doc.categories) <= set(CATEGORIES), doc.id
        assert doc.categories, f"{doc.id} has no category"
        assert len(doc.sources) >= 2, f"{doc.id} cites fewer than two sources"
        words = len(doc.body.split())
        assert 300 <= words <= 800, f"{doc.id}: {words} words"
    general = {"debugging_ladder", "evaluation_protocol", "production_checklist"}
    assert general <= set(ids)
    for doc in docs:
        if doc.id in CATEGORIES:
            for heading in ("## Causes", "## How to confirm", "## Fixes", "## Pitfalls"):
                assert heading in doc.body, f"{doc.id} lacks {heading}"


def test_front_matter_errors_name_the_file_the_key_and_the_accepted_values(tmp_path):
    bad = "---\nid: x\ncategories: [overfiting]\n---\n# X\n\ntext\n"
    with pytest.raises(CorpusError, match=r"overfiting.*accepted: missing_values"):
        parse_document(bad, path="notes/x.md")
    with pytest.raises(CorpusError, match=r"unknown front matter key.*'tags'"):
        parse_document("---\nid: x\ntags: [a]\n---\ntext\n", path="x.md")
    with pytest.raises(CorpusError, match="not valid YAML"):
        parse_document("---\nid: [unclosed\n---\ntext\n", path="x.md")
    with pytest.raises(CorpusError, match="'id' must be lower-case"):
        parse_document("---\nid: Bad Id\n---\ntext\n", path="x.md")
    # a user document reusing a built-in id is refused
    (tmp_path / "dup.md").write_text("---\nid: overfitting\n---\n# Mine\n\ntext\n")
    with pytest.raises(CorpusError, match="used by both"):
        load_documents([tmp_path])
    with pytest.raises(CorpusError, match="does not exist"):
        load_documents([tmp_path / "nope"])


def test_user_documents_without_front_matter_get_an_id_and_a_title(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "Our Runbook.md").write_text("# Team runbook\n\nRestart the job.\n")
    [doc] = load_documents([tmp_path], include_builtin=False)
    assert doc.id == f"user/{tmp_path.name.lower()}/sub/our_runbook"
    assert doc.title == "Team runbook"
    assert doc.categories == () and doc.origin == "user"


def test_chunking_follows_headings_and_ids_are_deterministic():
    text = textwrap.dedent("""\
        ---
        id: t
        title: T
        categories: [outliers]
        ---
        # T

        Intro paragraph.

        ## Causes

        Cause one.

        ### Detail

        Deeper detail.

        ## Fixes

        ```python
        # a comment, not a heading
        x = 1
        ```
        """)
    doc = parse_document(text)
    chunks = chunk_document(doc)
    assert [c.section for c in chunks] == ["Overview", "Causes", "Fixes"]
    assert "Deeper detail." in chunks[1].text and "Fixes" not in chunks[1].text
    assert "# a comment, not a heading" in chunks[2].text
    assert chunks[1].point_id("m") == chunk_document(parse_document(text))[1].point_id("m")
    assert chunks[1].point_id("m") != chunks[1].point_id("other-model")
    # a long section is split at paragraph boundaries, each piece under the limit
    long = parse_document("## Fixes\n\n" + "\n\n".join(["word " * 60] * 5))
    pieces = chunk_document(long, max_words=130)
    assert len(pieces) == 3 and all(len(p.text.split()) <= 130 for p in pieces)
    assert pieces[0].section == "Fixes (1/3)"


def test_builtin_corpus_is_package_data():
    assert len(list(builtin_corpus_dir().glob("*.md"))) >= len(CATEGORIES) + 3


# ------------------------------------------------------------- failures (no model)


def test_missing_kb_raises_clearly_without_importing_torch(tmp_path):
    code = textwrap.dedent(f"""
        import sys
        from kb_builder import KnowledgeBase, KnowledgeBaseUnavailable
        try:
            KnowledgeBase.open(path={str(tmp_path / "absent")!r})
        except KnowledgeBaseUnavailable as e:
            print("MSG", e)
        print("TORCH", "torch" in sys.modules, "ST", "sentence_transformers" in sys.modules,
              "QDRANT", "qdrant_client" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert "does not exist" in out and "deepfix kb build --path" in out
    assert "TORCH False ST False QDRANT False" in out


def test_corrupt_meta_json_raises_clearly(tmp_path):
    (tmp_path / "meta.json").write_text("{not json")
    with pytest.raises(KnowledgeBaseUnavailable, match=r"corrupt \(meta.json.*rebuild"):
        KnowledgeBase.open(path=str(tmp_path))
    (tmp_path / "meta.json").write_text(json.dumps({"collections": {"other": {}}}))
    with pytest.raises(KnowledgeBaseUnavailable, match=r"no collection 'deepfix_kb'.*other"):
        KnowledgeBase.open(path=str(tmp_path))


def test_arguments_are_validated():
    with pytest.raises(ValueError, match="either path or url"):
        KnowledgeBase.open(path="a", url="http://b")
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        build_kb(path="x", batch_size=0)


# ------------------------------------------------------------ real model + Qdrant


@pytest.fixture(scope="module")
def full_kb(tmp_path_factory):
    path = tmp_path_factory.mktemp("kb") / "store"
    report = build_kb(path=str(path), progress=False)
    return path, report


@pytest.fixture(scope="module")
def kb(full_kb):
    handle = KnowledgeBase.open(path=str(full_kb[0]))
    yield handle
    handle.close()


@pytest.mark.kb
def test_build_indexes_the_whole_corpus(full_kb):
    _, report = full_kb
    assert report.documents == len(load_documents())
    assert report.embedded == report.chunks > report.documents * 3
    assert report.deleted == 0 and report.unchanged == 0


@pytest.mark.kb
def test_rebuild_is_idempotent_and_embeds_nothing(full_kb):
    path, first = full_kb
    again = build_kb(path=str(path), progress=False)
    assert (again.embedded, again.deleted, again.unchanged) == (0, 0, first.chunks)


@pytest.mark.kb
@pytest.mark.parametrize("query, expected", [
    ("the test set contains rows that are also in the training set", "train_test_overlap"),
    ("predicted probabilities are not reliable, reliability diagram off the diagonal",
     "poor_calibration"),
    ("OneHotEncoder fails on a category value that only appears at inference", "unseen_categories"),
    ("rare fraud cases, accuracy looks great but no fraud is detected", "class_imbalance"),
    ("scaler missing in the deployed model so inputs are on another scale",
     "preprocessing_mismatch"),
])
def test_query_returns_the_right_document(kb, query, expected):
    hits = kb.search(query, top_k=3)
    assert expected in [h.doc_id for h in hits]
    assert hits == sorted(hits, key=lambda h: h.score, reverse=True)
    assert len({h.doc_id for h in hits}) == len(hits) == 3  # distinct documents
    best = hits[0]
    assert best.text and best.section and best.title and best.categories
    assert best.as_reference() == {"title": best.title, "source": best.doc_id,
                                   "section": best.section}


@pytest.mark.kb
def test_category_filter_restricts_results(kb):
    query = "test rows that also appear in training"
    hits = kb.search(query, category="outliers", top_k=5)
    assert hits and all("outliers" in h.categories for h in hits)
    assert hits[0].doc_id == "outliers"
    unfiltered = kb.search(query, top_k=5)
    assert "outliers" not in [h.doc_id for h in unfiltered]
    with pytest.raises(ValueError, match="category must be None or one of"):
        kb.search(query, category="outlier")
    with pytest.raises(ValueError, match="top_k must be a positive integer"):
        kb.search(query, top_k=0)


@pytest.mark.kb
def test_search_many_matches_single_searches(kb):
    queries = [("labels drift between splits", None), ("id column predicts", "identifier_leakage"),
               ("model ignores many features", None)]
    batch = kb.search_many(queries, top_k=2)
    single = [kb.search(q, category=c, top_k=2) for q, c in queries]
    assert [[h.doc_id for h in hs] for hs in batch] == [[h.doc_id for h in hs] for hs in single]
    for b, s in zip(batch, single):
        assert [round(h.score, 4) for h in b] == [round(h.score, 4) for h in s]
    assert kb.search_many([]) == []


@pytest.mark.kb
def test_paraphrase_hit_rate(kb):
    """Held-out user-phrased questions, category filter off, top 3. Measured: 24/26
    held-out and 48/52 development questions (see kb_builder.quality); the thresholds
    guard against regressions rather than claim 100%."""
    from kb_builder.quality import HELD_OUT, PARAPHRASES, paraphrase_hit_rate

    held_out = paraphrase_hit_rate(kb, questions=HELD_OUT)
    dev = paraphrase_hit_rate(kb, questions=PARAPHRASES)
    # paraphrase sets cover the contract's categories; those added since have KB documents
    # (checked above) but no held-out questions yet
    assert {c for c, _ in HELD_OUT} == set(CONTRACT_CATEGORIES)
    assert held_out.hit_rate >= 0.88, held_out.misses
    assert dev.hit_rate >= 0.88, dev.misses


@pytest.mark.kb
def test_user_folder_is_indexed_incrementally(tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "feature_store.md").write_text(textwrap.dedent("""\
        ---
        id: team/feature-store
        title: Feature store freshness
        categories: [feature_drift]
        sources: ["internal wiki"]
        ---
        ## Symptoms

        The nightly feature store snapshot was stale, so every model scored yesterday's data.

        ## Fixes

        Check the snapshot timestamp before scoring and page the data platform on-call.
        """))
    (notes / "gpu.md").write_text("# GPU quota\n\nAsk the platform team for more GPU hours.\n")
    store = str(tmp_path / "store")
    first = build_kb([notes], path=store, include_builtin=False, progress=False)
    assert (first.documents, first.chunks, first.embedded) == (2, 3, 3)
    with KnowledgeBase.open(path=store) as kb:
        [hit] = kb.search("features were out of date because the snapshot did not refresh",
                          top_k=1)
        assert hit.doc_id == "team/feature-store" and hit.categories == ("feature_drift",)
        assert kb.search("stale snapshot", category="feature_drift")[0].doc_id == "team/feature-store"
        assert kb.info()["documents"]["user/notes/gpu"]["origin"] == "user"
    # edit one section and delete the other file: only the changed chunk is embedded
    text = (notes / "feature_store.md").read_text().replace("page the data", "alert the data")
    (notes / "feature_store.md").write_text(text)
    (notes / "gpu.md").unlink()
    second = build_kb([notes], path=store, include_builtin=False, progress=False)
    assert (second.embedded, second.unchanged, second.deleted) == (1, 1, 2)
    with KnowledgeBase.open(path=store) as kb:
        assert kb.n_chunks == 2
        assert "alert the data" in kb.search("who to call about the snapshot", top_k=1)[0].text


@pytest.mark.kb
def test_corrupt_storage_raises_clearly(full_kb, tmp_path):
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(full_kb[0], broken)
    (broken / "collection" / "deepfix_kb" / "storage.sqlite").write_bytes(b"garbage" * 100)
    with pytest.raises(KnowledgeBaseUnavailable, match="corrupt.*deepfix kb build"):
        KnowledgeBase.open(path=str(broken))


@pytest.mark.kb
def test_empty_collection_raises_clearly(tmp_path):
    from qdrant_client import QdrantClient, models

    client = QdrantClient(path=str(tmp_path))
    client.create_collection("deepfix_kb", vectors_config=models.VectorParams(
        size=384, distance=models.Distance.COSINE))
    client.close()
    with pytest.raises(KnowledgeBaseUnavailable, match="is empty"):
        KnowledgeBase.open(path=str(tmp_path))


@pytest.mark.kb
def test_lock_held_elsewhere_times_out_clearly_and_open_releases_it(full_kb):
    from qdrant_client import QdrantClient

    path = str(full_kb[0])
    holder = QdrantClient(path=path)  # another "process" holding the embedded store
    try:
        with pytest.raises(KnowledgeBaseUnavailable, match="locked by another process"):
            KnowledgeBase.open(path=path, lock_timeout=0.3)
    finally:
        holder.close()
    # an open KnowledgeBase does not keep the lock: two can be open at once
    with KnowledgeBase.open(path=path) as a, KnowledgeBase.open(path=path) as b:
        assert a.search("overfitting", top_k=1)[0].doc_id == b.search("overfitting", top_k=1)[0].doc_id


@pytest.mark.kb
def test_cli_build_query_info(full_kb, capsys, tmp_path):
    from kb_builder.cli import main

    path = str(full_kb[0])
    assert main(["query", "scores are not real probabilities", "--path", path, "--top-k", "2",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out) == 2 and out[0]["source"] == "poor_calibration"
    assert main(["info", "--path", path]) == 0
    assert f"{len(load_documents())} documents" in capsys.readouterr().out
    assert main(["query", "x", "--path", str(tmp_path / "absent")]) == 2
    assert "deepfix kb build" in capsys.readouterr().err
    assert main(["build", "--path", path, "--quiet"]) == 0
    assert "embedded 0" in capsys.readouterr().out


def test_register_adds_kb_command_to_a_parent_parser():
    import argparse

    from kb_builder.cli import register, run

    parser = argparse.ArgumentParser(prog="deepfix")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["kb", "query", "text", "--category", "outliers", "--top-k", "5"])
    assert args.func is run and args.kb_command == "query"
    assert (args.text, args.category, args.top_k, args.collection) == ("text", "outliers", 5,
                                                                       "deepfix_kb")
