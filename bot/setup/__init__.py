"""Setting him up in a server (docs/architecture.md §13): what the bot needs from Discord
(:mod:`bot.setup.needs`), the invite link (:mod:`bot.setup.invite`), the check of a whole setup
(:mod:`bot.setup.doctor`) and the slash commands as the code declares them
(:mod:`bot.setup.commands`)."""
