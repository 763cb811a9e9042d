"""An extension whose import fails, as a cog does when a library it needs is missing."""

raise ImportError("No module named 'some_library_the_cog_needs'")
