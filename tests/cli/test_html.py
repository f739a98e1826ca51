"""``compile --format html`` and ``CompiledChatRequest._repr_html_``: one self-contained page of
the request's anatomy, checked with the standard library's HTML parser."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from lionagi import Branch

from lionagi_turns import TurnRequest, compile_chat_request, to_provider_messages
from lionagi_turns.cli._compile import text_of
from lionagi_turns.cli._html import widths

from .conftest import EXAMPLES, save
from .test_compile_prompt_cache import saved_conversation

PROFILES = ("default", "prompt-cache", "amendment1")
GOOD = ("support", "tools", "images")
LOADING = {"script", "link", "img", "iframe", "object", "embed", "video", "audio", "source"}


class Page(HTMLParser):
    """What the checks read: every start tag, each message's ``<pre class="text">`` data, the
    widths of the section segments and of the message bars."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.texts: list[str] = []
        self.details: list[str] = []
        self.segments: dict[str, float] = {}
        self.bars: list[float] = []
        self.parts: list[dict[str, float]] = []
        self.styles: list[str] = []
        self._pre: list[str] | None = None
        self._style: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append((tag, a))
        classes = (a.get("class") or "").split()
        width = (a.get("style") or "").removeprefix("width:").removesuffix("%")
        if "seg" in classes:
            self.segments[str(a["data-section"])] = float(width)
        if "row-bar" in classes:
            self.bars.append(float(width))
            self.parts.append({})
        if "part" in classes:
            self.parts[-1][str(a["data-section"])] = float(width)
        if tag == "details" and "message" in classes:
            self.details.append(str(a.get("data-at")))
        if tag == "pre" and "text" in classes:
            self._pre = []
        if tag == "style":
            self._style = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "pre" and self._pre is not None:
            self.texts.append("".join(self._pre))
            self._pre = None
        if tag == "style" and self._style is not None:
            self.styles.append("".join(self._style))
            self._style = None

    def handle_data(self, data: str) -> None:
        for sink in (self._pre, self._style):
            if sink is not None:
                sink.append(data)


def parse(document: str) -> Page:
    page = Page()
    page.feed(document)
    page.close()
    return page


def assert_self_contained(document: str, page: Page, texts: list[str]) -> None:
    """No tag that loads anything, no URL outside the escaped texts, CSS that imports none."""
    thumbs = [a for t, a in page.tags if t == "img"]
    assert all(set(a) == {"class", "src", "alt"} and a["class"] == "thumb"
               and str(a["src"]).startswith("data:image/") for a in thumbs), thumbs
    assert not [t for t, _ in page.tags if t in LOADING - {"img"}], "a tag that loads something"
    ids = {a["id"] for _, a in page.tags if a.get("id")}
    for tag, attrs in page.tags:
        if tag == "a":  # a link goes to a row of the same page, nowhere else
            assert set(attrs) == {"href"} and str(attrs["href"]).removeprefix("#") in ids, attrs
        elif tag != "img":
            assert not {"src", "href", "srcset", "action"} & set(attrs), (tag, attrs)
        assert not any(k.startswith("on") for k in attrs), (tag, attrs)
    for css in page.styles:
        assert "url(" not in css and "@import" not in css and "http" not in css
    rest = re.sub(r'<span class="remote">[^<]*</span>', "", document)
    previews = re.findall(r'<blockquote class="preview">([^<]*)', rest)
    assert all(any(t.startswith(html.unescape(p)) for t in texts) for p in previews)
    rest = re.sub(r'<blockquote class="preview">[^<]*', "", rest)  # a prefix of a text
    for text in texts:
        rest = rest.replace(html.escape(text, quote=True), "", 1)
    assert "http" not in rest and "<script" not in rest.lower()


def assert_anatomy(document: str, report: dict[str, Any], system: list[str]) -> Page:
    """The page of ``report`` (its ``--format json``): every message's exact text, escaped, in
    order; the section and message bars summing to 100.00; the table's tokens the JSON's."""
    page = parse(document)
    texts = [*system, *(text_of(m["content"])[0] for m in report["messages"])]
    assert page.texts == texts
    for text in texts:
        assert html.escape(text, quote=True) in document
    header = [str(report.get(k) or "") for k in ("path", "instruction")]
    assert_self_contained(document, page, [*texts, *header])
    sections = report["sections"]
    with_tokens = {n for n, row in sections.items() if n != "total" and row["tokens"]}
    assert set(page.segments) == with_tokens
    assert round(sum(page.segments.values()), 2) == 100.00
    for name in with_tokens:
        share = 100 * sections[name]["tokens"] / sections["total"]["tokens"]
        assert abs(page.segments[name] - share) <= 0.01 + 1e-9, name
        assert f"<td class=\"n\">{sections[name]['tokens']:,}</td>" in document
    assert len(page.bars) == len(texts)
    assert round(sum(page.bars), 2) == 100.00
    for parts in page.parts:
        assert not parts or round(sum(parts.values()), 2) == 100.00
    fold = report["fold"]["message_index"]
    if fold is not None:  # the fold message's bar shows the sections folded into it
        folded = {"system", "context_blocks", "guidance"} & with_tokens
        assert folded <= set(page.parts[len(system) + fold]), page.parts
    assert page.details == [*(f"system[{i}]" for i in range(len(system))),
                            *(f"messages[{i}]" for i in range(len(report["messages"])))]
    return page


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("name", GOOD)
def test_every_example_in_every_profile(run_cli, name: str, profile: str) -> None:
    args = ("compile", str(EXAMPLES / f"{name}.json"), "--profile", profile, "-c", "kb=a <b>")
    run = run_cli(*args, "--format", "html")
    assert run.code == 0, run.stderr
    assert run.stdout.startswith("<!DOCTYPE html>") and run.stdout.endswith("</html>\n")
    report = run_cli(*args, "--format", "json").json()
    system = [b["text"] for b in report.get("system", [])]
    assert_anatomy(run.stdout, report, system)
    fold = report["fold"]
    if fold["message_index"] is not None:
        assert f"messages[{fold['message_index']}] carries the fold: " in run.stdout
        assert "fold: " + " + ".join(fold["sections"]) in run.stdout


def test_a_rejected_history_prints_no_page(run_cli) -> None:
    for profile in PROFILES:
        run = run_cli("compile", str(EXAMPLES / "broken.json"), "--profile", profile, "-f", "html")
        assert run.code == 1 and run.stdout == "", profile


def test_hostile_text_stays_text(run_cli, tmp_path: Path) -> None:
    evil = '<script src="http://evil.test/x.js"></script><img src=x onerror=alert(1)> & "q"'
    branch = Branch(system=f"sys {evil}")
    branch.msgs.add_message(instruction=f"hi {evil}")
    branch.msgs.add_message(assistant_response=f"see https://example.org/{evil}")
    path = save(branch, tmp_path / "evil.json")
    run = run_cli("compile", str(path), "-i", f"now {evil}", "-f", "html")
    assert run.code == 0, run.stderr
    report = run_cli("compile", str(path), "-i", f"now {evil}", "-f", "json").json()
    page = assert_anatomy(run.stdout, report, [])
    assert any(evil in text for text in page.texts)
    assert "&lt;script src=&quot;http://evil.test/x.js&quot;&gt;" in run.stdout


def test_prompt_cache_page_shows_segments_and_marks(run_cli, tmp_path: Path) -> None:
    path = saved_conversation(tmp_path)
    run = run_cli("compile", str(path), "--profile", "prompt-cache", "-f", "html")
    assert run.code == 0, run.stderr
    report = run_cli("compile", str(path), "--profile", "prompt-cache", "-f", "json").json()
    assert_anatomy(run.stdout, report, [b["text"] for b in report["system"]])
    assert "Prompt-cache segments" in run.stdout
    for mark in report["marks"]:
        assert f"<li>{mark['at']}: {mark['ttl']} ({mark['segment']})</li>" in run.stdout
    assert run.stdout.count('<span class="mark">cache mark ') == len(report["marks"]) == 3
    assert "changes against the previous recorded request: none" in run.stdout


def test_amendment1_page_says_what_was_left_out_and_why(run_cli, tmp_path: Path) -> None:
    args = ("compile", str(saved_conversation(tmp_path)), "--profile", "amendment1",
            "--budget", "history=1")
    report = run_cli(*args, "-f", "json").json()
    left = [(row["section"], e) for row in report["bounds"] for e in row["left_out"]]
    assert left, report["bounds"]
    run = run_cli(*args, "-f", "html")
    assert run.code == 0, run.stderr
    assert_anatomy(run.stdout, report, [b["text"] for b in report.get("system", [])])
    assert "Amendment 1 sections" in run.stdout
    for row in report["bounds"]:
        if row["left_out"]:
            assert f'<summary>{len(row["left_out"]):,} left out: ' in run.stdout
    for _, entry in left:
        assert f'<li class="left">{html.escape(entry["name"])}: {html.escape(entry["reason"])}' \
            in run.stdout


def test_last_and_around_choose_the_pages_messages(run_cli) -> None:
    """``--last N`` and ``--around K`` page the HTML as they page the text view; the summary
    still lists every message it links, naming the --around that shows one left out."""
    path = str(EXAMPLES / "support.json")
    full = parse(run_cli("compile", path, "-f", "html").stdout)
    assert full.details == [f"messages[{i}]" for i in range(5)]
    last = run_cli("compile", path, "--last", "2", "-f", "html").stdout
    assert parse(last).details == ["messages[3]", "messages[4]"]
    assert parse(last).texts == full.texts[3:]
    assert "3 of 5 message(s) not shown (--last 2)" in last
    assert "messages[0] <span class=\"off\">(not on this page: --around 0)</span>" in last
    around = run_cli("compile", path, "--around", "1", "-f", "html").stdout
    assert parse(around).details == [f"messages[{i}]" for i in range(5)]  # 25 on each side
    for bad in (("--around", "5"), ("--around", "-1"), ("--around", "1", "--last", "1")):
        run = run_cli("compile", path, *bad, "-f", "html")
        assert run.code == 2 and run.stdout == "" and len(run.stderr.splitlines()) == 1, bad


def test_widths_sum_to_exactly_100() -> None:
    assert widths([1, 1, 1]) == [33.34, 33.33, 33.33]
    assert sum(widths([7, 0, 13, 29, 1])) == pytest.approx(100.0, abs=1e-9)
    assert widths([0, 0]) == [0.0, 0.0] and widths([]) == []


def test_repr_html_is_the_page_body_of_the_request(run_cli, conversation: Path) -> None:
    """A notebook's view of a compiled request: the same anatomy the CLI page shows."""
    from lionagi_turns.cli._load import load_branch

    branch = load_branch(conversation).branch
    request = TurnRequest(instruction=branch.msgs.create_instruction(instruction="And 3+4?"))
    compiled = compile_chat_request(branch, request)
    body = compiled._repr_html_()
    assert body.startswith('<div class="lt-request">') and "<html" not in body
    messages = to_provider_messages(compiled)
    report = {
        "messages": messages,
        "sections": run_cli("compile", str(conversation), "-i", "And 3+4?", "-f", "json").json()[
            "sections"],
    }
    page = parse(body)
    texts = [text_of(m["content"])[0] for m in messages]
    assert page.texts == texts and len(page.bars) == len(texts)
    assert round(sum(page.bars), 2) == 100.00
    assert_self_contained(body, page, texts)
    cli = run_cli("compile", str(conversation), "-i", "And 3+4?", "-f", "html").stdout
    assert parse(cli).texts == texts  # the same messages the CLI page shows
    total = report["sections"]["total"]["characters"]  # a partition: the same in any split
    assert f'<tr data-section="total"><td>total</td><td class="n">{total:,}</td>' in body
    assert "not recorded on a compiled request" in body


_VARIANTS = (("--profile", "default"), ("--profile", "prompt-cache"),
             ("--profile", "amendment1"), ("--profile", "amendment1", "--ceiling", "300"))
_COUNT = re.compile(r"\b(\d{4,})\s+(?:tokens?|characters?|chars|messages?|turns?)\b")


def _visible(page: str) -> str:
    return html.unescape(re.sub(r"<style>.*?</style>|<[^>]+>", " ", page, flags=re.S))


@pytest.mark.parametrize("variant", _VARIANTS, ids=" ".join)
def test_no_page_shows_python_internals(run_cli, variant: tuple[str, ...]) -> None:
    for example in sorted(EXAMPLES.glob("*.json")):
        run = run_cli("compile", str(example), *variant, "-f", "html")
        if run.code != 0:
            continue
        chrome = _visible(run.stdout.split('<h2>Messages</h2>')[0])
        assert "None" not in chrome, (example.name, chrome)
        assert not re.search(r"\{'|\['|\('", chrome), (example.name, chrome)
        assert not _COUNT.search(chrome), (example.name, _COUNT.search(chrome))


def test_ceiling_report_is_on_the_page(run_cli) -> None:
    args = ("compile", str(EXAMPLES / "support.json"), "--profile", "amendment1",
            "--ceiling", "300")
    record = run_cli(*args, "-f", "json").json()["ceiling"]
    page = _visible(run_cli(*args, "-f", "html").stdout)
    assert f"ceiling {record['ceiling']:,} tokens, low-water mark {record['low_water']:,}" \
        in page
    step = "this request is a drop step" if record["stepped"] else "no drop step this request"
    assert step in page and f"{record['kept_turns']:,} turn(s) kept" in page
    if record["turns_before_next_step"] is not None:
        assert f"{record['turns_before_next_step']:,} more turn(s)" in page


def test_images_show_as_thumbnails_or_as_text(run_cli, tmp_path: Path) -> None:
    inline = "data:image/png;base64," + "iVBORw0KGgo" * 3
    remote = "https://images.example.org/shot.png"
    branch = Branch(system="look")
    branch.msgs.add_message(instruction="see", images=[inline, remote], image_detail="low")
    branch.msgs.add_message(assistant_response="seen")
    path = save(branch, tmp_path / "pictures.json")
    for profile in PROFILES:
        run = run_cli("compile", str(path), "--profile", profile, "-f", "html")
        assert run.code == 0, run.stderr
        page = parse(run.stdout)
        thumbs = [a for t, a in page.tags if t == "img"]
        assert [a["src"] for a in thumbs] == [inline], profile
        assert "image 1 · detail: low" in run.stdout
        assert f'remote, not loaded:</figcaption><span class="remote">{remote}</span>' \
            in run.stdout
        assert_self_contained(run.stdout, page, page.texts)


def _between(page: str, start: str, end: str) -> str:
    return page[page.index(start):page.index(end, page.index(start))]


def test_amendment1_repr_html_is_the_cli_pages_amendment1_part(run_cli) -> None:
    """Amendment 1's compiled request in a notebook: the bounds (and the ceiling report) of
    the CLI's page for the same compile."""
    from lionagi_turns import amendment1
    from lionagi_turns.cli._load import load_branch

    path = EXAMPLES / "support.json"
    for option, kwargs in ((("--budget", "history=1"),
                            {"budgets": amendment1.SectionBudgets(history=1)}),
                           (("--ceiling", "300"), {"ceiling": amendment1.InputCeiling(300)})):
        cli = run_cli("compile", str(path), "--profile", "amendment1", *option, "-i", "Next?",
                      "-f", "html")
        branch = load_branch(path).branch
        instruction = branch.msgs.create_instruction(instruction="Next?")
        compiled = amendment1.compile_chat_request(
            branch, amendment1.TurnRequest(instruction=instruction), **kwargs)
        body = compiled._repr_html_()
        assert body is not None and body.startswith('<div class="lt-request">')
        assert _between(body, "<h2>Amendment 1 sections", "<h2>Messages") == _between(
            cli.stdout, "<h2>Amendment 1 sections", "<h2>Messages")


def test_repr_is_a_short_summary(conversation: Path) -> None:
    from lionagi_turns import amendment1
    from lionagi_turns.cli._load import load_branch

    branch = load_branch(conversation).branch
    instruction = branch.msgs.create_instruction(instruction="And 3+4?")
    compiled = compile_chat_request(branch, TurnRequest(instruction=instruction))
    text = repr(compiled)
    assert text.startswith(f"<CompiledChatRequest: {len(compiled.messages)} message(s) (")
    assert "\n" not in text and len(text) < 200
    assert all(str(m.content)[:40] not in text for m in compiled.messages)
    amended = amendment1.compile_chat_request(
        branch, amendment1.TurnRequest(instruction=instruction),
        budgets=amendment1.SectionBudgets(history=1))
    left = [f"{b.section} {len(b.left_out)}" for b in amended.bounds if b.left_out]
    assert left and repr(amended).endswith("; left out: " + ", ".join(left) + ">")
