"""What Clankie costs (docs/architecture.md §5 "What he costs"): every model call's tokens, per
server, part and model and UTC day (:mod:`bot.usage.ledger`), priced from ``[prices]``
(:mod:`bot.usage.prices`) and held under ``[budget]`` (:mod:`bot.usage.budget`)."""
