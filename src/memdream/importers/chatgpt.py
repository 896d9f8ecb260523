"""ChatGPT data export: the .zip as it is downloaded, or the conversations.json inside it (a
list of conversations with a message tree).

Each conversation's main branch is followed from `current_node` back to the root; text
parts are kept verbatim, other parts (images, tool payloads) are skipped.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path, PurePosixPath

from memdream.importers.common import parse_when, read_text
from memdream.store.transcripts import Message, Transcript


def _text(message: dict) -> str:
    content = message.get("content") or {}
    parts = content.get("parts") if isinstance(content, dict) else None
    if isinstance(parts, list):
        return "\n".join(p for p in parts if isinstance(p, str)).strip()
    text = content.get("text") if isinstance(content, dict) else None
    return text.strip() if isinstance(text, str) else ""


def _from_zip(path: Path):  # type: ignore[no-untyped-def]
    """The export as ChatGPT mails it (a .zip): its conversations.json, or why not."""
    from memdream.importers.common import MAX_IMPORT_BYTES

    try:
        with zipfile.ZipFile(path) as z:
            names = [i for i in z.infolist() if PurePosixPath(i.filename).name == "conversations.json" and not i.is_dir()]
            if not names:
                return None, "a zip without conversations.json (is it a ChatGPT data export?)"
            info = min(names, key=lambda i: len(i.filename))  # the export's own, not a nested copy
            if info.file_size > MAX_IMPORT_BYTES:
                return None, f"conversations.json is larger than {MAX_IMPORT_BYTES // 2**20} MiB; split it first"
            data = z.read(info)
    except (zipfile.BadZipFile, OSError, RuntimeError) as exc:  # RuntimeError: an encrypted member
        return None, f"the zip cannot be read ({exc})"
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data.decode("utf-8", errors="replace"), ""


def read_chatgpt(path: Path):  # type: ignore[no-untyped-def]
    """Conversations from a ChatGPT export: the .zip as downloaded, or its conversations.json."""
    from memdream.importers.common import Skipped

    if zipfile.is_zipfile(path):
        text, why = _from_zip(path)
        if text is None:
            yield Skipped(str(path), why)
            return
    else:
        text = read_text(path)
    try:
        data = json.loads(text)
    except ValueError as exc:
        yield Skipped(str(path), f"not JSON ({exc}); give the export's .zip or its conversations.json")
        return
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        yield Skipped(str(path), "expected a list of conversations")
        return
    for i, conv in enumerate(data):
        where = f"{path}#{i}"
        if not isinstance(conv, dict) or not isinstance(conv.get("mapping"), dict):
            yield Skipped(where, "no 'mapping' (not a ChatGPT conversation)")
            continue
        mapping = conv["mapping"]
        node_id = conv.get("current_node")
        if not isinstance(node_id, str) or node_id not in mapping:  # no pointer: take the last node that has a message
            node_id = next((k for k in reversed(list(mapping)) if isinstance(mapping[k], dict) and mapping[k].get("message")), None)
        chain: list[dict] = []
        seen: set[str] = set()
        while isinstance(node_id, str) and node_id in mapping and node_id not in seen:
            seen.add(node_id)
            node = mapping[node_id] if isinstance(mapping[node_id], dict) else {}
            if isinstance(node.get("message"), dict):
                chain.append(node["message"])
            node_id = node.get("parent")
        messages = []
        for msg in reversed(chain):
            role = (msg.get("author") or {}).get("role", "unknown") if isinstance(msg.get("author"), dict) else "unknown"
            text = _text(msg)
            if role in ("system", "tool") or not text:
                continue
            messages.append(Message(str(role), text, parse_when(msg.get("create_time"))))
        if not messages:
            yield Skipped(where, "no user or assistant text")
            continue
        yield Transcript(
            "chatgpt",
            messages,
            title=str(conv.get("title") or ""),
            started_at=parse_when(conv.get("create_time")) or messages[0].at,
            source_id=str(conv.get("id") or conv.get("conversation_id") or ""),
        )
