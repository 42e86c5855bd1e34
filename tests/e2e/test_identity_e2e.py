"""Chimera's own identities (issue "one outcome", the last row): a typed ``bot-login`` that is a
placeholder, or that is not who a person's token acts as, stops the job in one line; a person's
token makes that person Chimera (said in the job summary); an App's installation token, which
GitHub will not name, is Chimera under the configured ``bot-login``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chimera.github.queue.claims import bare_claim, new_token
from chimera.github.trust.summary import parse_marker
from chimera.testing.github_fake import comment_event

if TYPE_CHECKING:
    from conftest import World

TASK = "Add total().\n\n```chimera\nrequirements:\n  - id: t\n    defines: {path: calc.py}\n```\n"


def setup(world: World) -> None:
    world.fake.add_issue("octo/app", title="total", body=TASK, user="alice", labels=("chimera",))


def outcomes(world: World) -> list[tuple[str, str]]:
    markers = (parse_marker(body, "outcome") for body in world.comments(1))
    return [(str(m.get("kind")), str(m["key"])) for m in markers if m is not None]


def _unlabeled(world: World, issue: int, sender: str, kind: str = "User") -> dict[str, Any]:
    event = world.labeled(issue, sender) | {"action": "unlabeled"}
    event["sender"] = {"login": sender, "type": kind}
    return event


def _queue_as(world: World, token: str, issue: int) -> None:
    """``chimera:queued`` as the holder of ``token`` adds it (only Chimera's own counts)."""
    world.fake.pygithub(token).get_repo("octo/app").get_issue(issue).add_to_labels("chimera:queued")


def _summary(world: World, run: int) -> list[str]:
    path = world.tmp / f"summary-{run}.md"
    return path.read_text().splitlines() if path.exists() else []


def test_a_placeholder_bot_login_stops_decide_in_one_line_and_says_so_on_the_issue(
    world: World,
) -> None:
    world.env["CHIMERA_BOT_LOGIN"] = "my-chimera-app[bot]"  # the example workflow's placeholder
    setup(world)
    gate = world.job(
        "decide", "issues", world.labeled(1, "alice"), run=81,
        token=world.workflow_token(world.decide_perms),
    )  # fmt: skip
    assert gate["rc"] != 0 and gate.get("proceed") != "true"
    (line,) = _summary(world, 81)
    assert "my-chimera-app[bot] is no GitHub account" in line
    assert outcomes(world) == [("refused", "81:1")]
    assert "configuration is wrong" in world.comments(1)[0]
    assert "chimera:running" not in world.repo.issues[1]["labels"] and world.repo.pulls() == []


def test_the_configured_app_login_passes_decide(world: World) -> None:
    setup(world)  # CHIMERA_BOT_LOGIN is chimera-app[bot], an installed App's bot
    gate = world.job(
        "decide", "issues", world.labeled(1, "alice"), run=82,
        token=world.workflow_token(world.decide_perms),
    )  # fmt: skip
    assert gate["proceed"] == "true" and _summary(world, 82) == []


def test_an_app_token_github_will_not_name_is_unknown_and_bot_login_names_it(
    world: World,
) -> None:
    # GitHub names no installation token (GET /app wants the App's JWT): with bot-login
    # empty, drain still runs, and the summary says to fill it from the app-slug output.
    world.env["CHIMERA_BOT_LOGIN"] = ""
    setup(world)
    drained = world.job(
        "drain", "issues", _unlabeled(world, 1, "bob"), run=83, token=world.app_token
    )
    assert drained["rc"] == 0
    assert "app-slug" in "\n".join(_summary(world, 83))
    assert [c.status for c in world.fake.calls_to("GET", r"^/app$")] == []  # never asked


def _beyond_claims(world: World, issue: int) -> list[str]:
    """The issue's comments other than slot claims (a start's "running" outcome comment)."""
    return [c for c in world.comments(issue) if '"kind":"running"' not in c.replace(" ", "")]


def test_the_apps_own_label_removal_is_not_a_person_cancelling(world: World) -> None:
    # bot-login as the example workflow fills it: ${{ steps.app.outputs.app-slug }}[bot].
    world.env["CHIMERA_BOT_LOGIN"] = "chimera-app[bot]"
    setup(world)
    _queue_as(world, world.app_token, 1)
    event = _unlabeled(world, 1, "chimera-app[bot]", "Bot")
    drained = world.job("drain", "issues", event, run=84, token=world.app_token)
    assert drained["rc"] == 0 and drained["started"] == "1"  # its place kept, then started
    # Only the drain's claim on the slot (its "running" comment); nothing cancelled.
    assert _beyond_claims(world, 1) == [] and _summary(world, 84) == []
    # The same removal by a person cancels the queued place.
    setup(world)
    _queue_as(world, world.app_token, 2)
    drained = world.job(
        "drain", "issues", _unlabeled(world, 2, "bob"), run=85, token=world.app_token
    )
    assert drained["started"] == "" and "chimera:queued" not in world.repo.issues[2]["labels"]
    assert "`bob`" in world.comments(2)[0]


def test_a_maintainers_own_token_makes_the_maintainer_chimera_and_the_summary_says_so(
    world: World,
) -> None:
    # bob's personal token as drain's "App token", bot-login typed as bob: bob IS Chimera
    # now, so bob's own label removal cancels nothing. The job summary warns.
    world.env["CHIMERA_BOT_LOGIN"] = "bob"
    setup(world)
    token = world.fake.add_token("bob")
    _queue_as(world, token, 1)  # bob's token is Chimera's here
    drained = world.job("drain", "issues", _unlabeled(world, 1, "bob"), run=86, token=token)
    assert drained["rc"] == 0 and drained["started"] == "1"  # bob's removal cancelled nothing
    assert _beyond_claims(world, 1) == []
    (line,) = _summary(world, 86)
    assert "bob's labels, comments and reviews count as Chimera's" in line
    # Typed as someone else while holding bob's token: refused.
    world.env["CHIMERA_BOT_LOGIN"] = "alice"
    drained = world.job("drain", "issues", _unlabeled(world, 1, "bob"), run=87, token=token)
    assert drained["rc"] != 0
    assert "not who this job's token acts as (bob)" in _summary(world, 87)[0]


def test_a_running_label_set_by_a_person_holds_no_queue_slot(world: World) -> None:
    world.env["CHIMERA_MAX_OPEN_PRS"] = "1"
    # bob (triage rights would do) labels #1 chimera:running by hand: not Chimera's claim.
    world.fake.add_issue(
        "octo/app", title="squat", user="bob", labels=("chimera:running",), labelled_by="bob"
    )
    setup(world)  # #2, labelled chimera by alice
    token = world.workflow_token(world.decide_perms)
    gate = world.job("decide", "issues", world.labeled(2, "alice"), run=91, token=token)
    assert gate["proceed"] == "true" and gate["status"] == "running"
    # Chimera's own claim does hold the one slot: the next issue waits.
    setup(world)  # #3
    gate = world.job("decide", "issues", world.labeled(3, "alice"), run=92, token=token)
    assert gate["status"] == "queued"


def _say(world: World, number: int, login: str, body: str) -> dict[str, Any]:
    gh = world.fake.pygithub(world.fake.add_token(login))
    created = gh.get_repo("octo/app").get_issue(number).create_comment(body)
    return comment_event(world.fake, "octo/app", created.id)


def test_a_queued_run_asked_for_by_comment_starts_as_its_commander(world: World) -> None:
    world.env["CHIMERA_MAX_OPEN_PRS"] = "1"
    setup(world)  # #1 takes the only slot
    token = world.workflow_token(world.decide_perms)
    first = world.job("decide", "issues", world.labeled(1, "alice"), run=93, token=token)
    assert first["status"] == "running"
    world.fake.add_issue("octo/app", title="two", body=TASK, user="mallory")  # no label
    asked = _say(world, 2, "bob", "Please.\n@chimera run")
    gate = world.job("decide", "issue_comment", asked, run=94, token=token)
    assert gate["status"] == "queued" and "chimera" not in world.repo.issues[2]["labels"]
    world.repo.workflow_runs[93].update(status="completed", conclusion="cancelled")
    drained = world.job("drain", "schedule", _SCHEDULE, run=95, token=world.app_token)
    assert drained["started"] == "2"
    dispatched = world.dispatched()
    gate = world.job("decide", "workflow_dispatch", dispatched, run=96, token=token)
    assert gate["proceed"] == "true" and gate["started-by"] == "bob"  # the commander


_SCHEDULE = {"schedule": "*/15 * * * *", "repository": {"full_name": "octo/app"}}


def test_an_empty_bot_login_refuses_to_admit_a_run_decide_could_not_count(world: World) -> None:
    """The drain claimed the one slot with the App's token; decide, holding only GITHUB_TOKEN
    with bot-login empty, cannot tell that label from anyone's. It admits nothing rather than
    one run too many, and says why in one line."""
    world.env["CHIMERA_MAX_OPEN_PRS"] = "1"
    world.fake.add_issue(
        "octo/app", title="claimed", body=TASK, user="alice", labels=("chimera:running",),
        labelled_by="chimera-app[bot]",
    )  # fmt: skip
    # The drain's claim on the slot: its "running" comment, posted by the App.
    gh = world.fake.pygithub(world.app_token)
    gh.get_repo("octo/app").get_issue(1).create_comment(bare_claim(1, new_token()))
    setup(world)  # #2, labelled chimera by alice
    world.env["CHIMERA_BOT_LOGIN"] = ""
    gate = world.job(
        "decide", "issues", world.labeled(2, "alice"), run=93,
        token=world.workflow_token(world.decide_perms),
    )  # fmt: skip
    assert gate["rc"] != 0 and gate.get("proceed") != "true"
    (line,) = _summary(world, 93)
    assert "bot-login is empty" in line and "<app-slug>[bot]" in line
    assert "chimera:running" not in world.repo.issues[2]["labels"]
    (said,) = world.comments(2)
    assert "configuration is wrong: bot-login is empty" in said
    # Named, the App's claim counts: the same label waits its turn.
    world.env["CHIMERA_BOT_LOGIN"] = "chimera-app[bot]"
    gate = world.job(
        "decide", "issues", world.labeled(2, "alice"), run=94,
        token=world.workflow_token(world.decide_perms),
    )  # fmt: skip
    assert gate["status"] == "queued"
