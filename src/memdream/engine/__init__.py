"""The engine on top of the core (core.py): the write path, edits, imports, conflicts, recall
and the flush of trimmed chats. Each module is functions of a `Core`; `Memory` (memory.py)
composes them into the facade the shells call."""
