"""The text lane (docs/architecture.md §13): a message that mentions him is answered in its
channel by the captain on the ``text`` tool surface, one reply per burst, within bounds.

- :mod:`bot.text.conversation`: a channel's bounded conversation (lines, by count and size);
- :mod:`bot.text.mind`: one reply thought through by the captain's engine;
- :mod:`bot.text.reply`: what is posted (clipped, split, pinging nobody but the author);
- :mod:`bot.text.limits`: rate windows and caps on replies in flight;
- :mod:`bot.text.lane`: one worker per channel, folding a burst into one reply;
- :mod:`bot.text.receipts`: the ``discord.text.turn`` receipt of each mention.
"""
