"""The web surface (docs/architecture.md §10, §11), aiohttp on 127.0.0.1 by default.

- :mod:`bot.web.app` — ``make_app`` and :class:`~bot.web.app.WebSurface` (bind and token rules)
- :mod:`bot.web.embodiment` — the embodiment API and the server-sent event feed
- :mod:`bot.web.still_cache` — one encode per distinct frame
- :mod:`bot.web.share_store`, :mod:`bot.web.share_routes` — share capture links, frames, page
- :mod:`bot.web.embed` — ``start_web_for_demo`` for ``clankie demo``
- ``static/`` — the activity page and the capture page (HTML, JS, CSS; no build step)
"""
