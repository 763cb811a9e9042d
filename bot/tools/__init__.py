"""The shared tool registry and its tools (docs/architecture.md §3): :mod:`.base` (``Tool``,
``ToolResult``), :mod:`.context` (``ToolContext``, ``ToolServices``, ``Speaker``), :mod:`.registry`
(``ToolRegistry``), :mod:`.defaults` (``build_registry``) and one module per tool. The package
itself imports none of them, so reading one module of it does not load every tool."""
