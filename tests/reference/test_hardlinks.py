"""PERM-PATH-4: a deny rule covers every hard link of a file it covers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reference.permissions import session_rules
from reference.permissions.session_rules import READ_RULES, matching_deny_rule
from reference.session import Session
from reference.settings import Settings


def _session(tmp_path: Path, *deny: str) -> Session:
    settings = Settings(by_source={"session": {"permissions": {"deny": list(deny)}}})
    return Session.create(
        root=str(tmp_path), settings=settings, session_dir=str(tmp_path / ".s"), home=str(tmp_path)
    )


def _layout(tmp_path: Path) -> tuple[str, str]:
    (tmp_path / "secret").mkdir()
    (tmp_path / "open").mkdir()
    secret = tmp_path / "secret" / "k"
    secret.write_text("s3cret\n")
    link = tmp_path / "open" / "h"
    os.link(secret, link)
    (tmp_path / "open" / "a.txt").write_text("a\n")
    return str(link), str(tmp_path / "open" / "a.txt")


def test_a_link_to_a_covered_file_is_denied_and_others_are_not(tmp_path: Path) -> None:
    """SPEC: PERM-PATH-4"""
    link, plain = _layout(tmp_path)
    session = _session(tmp_path, "Read(/secret/**)")
    rule = matching_deny_rule(session, link, READ_RULES)
    assert rule is not None
    assert rule.text == "Read(/secret/**)"
    assert matching_deny_rule(session, plain, READ_RULES) is None


def test_a_bare_name_rule_finds_links_from_its_anchor(tmp_path: Path) -> None:
    """SPEC: PERM-PATH-4"""
    link, _ = _layout(tmp_path)
    assert matching_deny_rule(_session(tmp_path, "Read(k)"), link, READ_RULES) is not None


def test_a_link_between_two_allowed_files_is_not_denied(tmp_path: Path) -> None:
    """SPEC: PERM-PATH-4"""
    _layout(tmp_path)
    os.link(tmp_path / "open" / "a.txt", tmp_path / "open" / "b.txt")
    session = _session(tmp_path, "Read(/secret/**)")
    assert matching_deny_rule(session, str(tmp_path / "open" / "b.txt"), READ_RULES) is None


def test_a_directory_too_large_to_check_fails_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: PERM-PATH-4"""
    _layout(tmp_path)
    os.link(tmp_path / "open" / "a.txt", tmp_path / "open" / "b.txt")
    for i in range(20):
        (tmp_path / "secret" / f"f{i}").touch()
    session = _session(tmp_path, "Read(/secret/**)")
    monkeypatch.setattr(session_rules, "HARDLINK_WALK_LIMIT", 10)
    b = str(tmp_path / "open" / "b.txt")
    assert matching_deny_rule(session, b, READ_RULES) is not None
