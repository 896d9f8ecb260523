"""`memdream undo`: revert the last dream that changed something, by `git revert` in a git
vault, else by reversing its ledger record entry by entry (lines found by id, so later edits
elsewhere survive). The diary says so."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memdream.dream import gitvault, ledger
from memdream.dream.diary import Book
from memdream.errors import NotFound, VaultError
from memdream.store.format import Document, Line, parse_document

if TYPE_CHECKING:
    from memdream.core import Core


def undo(core: "Core") -> dict[str, Any]:
    """Revert the last dream that changed something: by `git revert` in a git vault, else by
    reversing its ledger record entry by entry. The index follows."""
    rec = ledger.last_dream(core)
    if rec is None:
        raise NotFound("there is no dream to undo", "run 'memdream dream' first; 'memdream dream --dry-run' shows what it would do")
    root = core.vault.root
    how = "ledger"
    if gitvault.is_git_vault(root):
        gitvault.commit_all(root, f"memdream: changes before undoing dream {rec['run']}")
        sha = gitvault.dream_commit(root, rec["run"])
        if sha and gitvault.revert(root, sha, f"undo dream {rec['run']}"):
            how = "git revert"
    if how == "ledger":
        _reverse(core, rec["changes"])
    core.sync()
    ledger.append(core, {"undo": rec["run"], "at": core.clock.now().isoformat(), "how": how})
    now = core.clock.now()
    book = Book(core, now)
    files = sorted(rec["changes"])
    book.add(
        f"## {now:%H:%M} — undo\n\nDream {rec['run']} was undone ({how}): "
        + ("every line it moved or marked is back where it stood, and what it added is gone" if how == "ledger" else "its commit was reverted")
        + f", in {len(files)} file{'' if len(files) == 1 else 's'}.\n",
        worth=True,
    )
    if gitvault.is_git_vault(root):
        gitvault.commit_all(root, f"memdream: ledger after undoing dream {rec['run']}")
    return {"undone": rec["run"], "how": how, "files": sorted(rec["changes"])}


def _reverse(core: "Core", changes: dict[str, dict]) -> None:
    """Put back every line the dream removed (keeping recall counts gathered since), then take
    out every line it added. Lines are found by id, so later edits elsewhere survive."""
    with core.writer.locked():
        for rel, ch in changes.items():
            path = core.vault.root / rel
            if not ch.get("removed"):
                continue
            if not core.vault.is_inside(path.parent if path.parent.exists() else core.vault.root):
                raise VaultError(f"the ledger names {rel}, outside the vault", "the ledger was edited by hand; undo with git instead")

            def put_back(doc: Document, removed: dict[str, str] = ch["removed"], at: dict[str, list] = ch.get("at", {})) -> None:
                # In the order the lines stood, each back where it was: after the entry line
                # that was above it, else at its old line number (older ledgers: at the end).
                for eid in sorted(removed, key=lambda e: at[e][0] if e in at else 1 << 30):
                    raw = removed[eid]
                    old = parse_document(raw + "\n").lines[0]
                    i = doc.find(eid)
                    if i >= 0:
                        cur = doc.lines[i].entry
                        if cur is not None and old.entry is not None and cur.hits > old.entry.hits:
                            doc.set_entry(i, old.entry.evolve(hits=cur.hits, last_recalled=cur.last_recalled))
                        else:
                            doc.lines[i] = old
                        continue
                    where = len(doc.lines)
                    if eid in at:
                        line_no, above = at[eid][0], at[eid][1]
                        j = doc.find(above) if above else -1
                        where = j + 1 if j >= 0 else min(int(line_no), len(doc.lines))
                    doc.lines.insert(where, Line(raw))

            core.update(path, put_back)
        for rel, ch in changes.items():
            gone = [i for i in ch.get("added", []) if i not in ch.get("removed", {})]
            if not gone:
                continue

            def take_out(doc: Document, gone: list[str] = gone) -> None:
                for eid in gone:
                    i = doc.find(eid)
                    if i >= 0:
                        doc.remove(i)

            upd = core.update(core.vault.root / rel, take_out)
            if ch.get("created") and not any(ln.is_entry for ln in upd.document.lines):
                core.writer.restore(core.vault.root / rel, None)  # the dream made this file: no empty husk stays
