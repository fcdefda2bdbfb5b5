"""Conversations: one service for every interface and answerer (:mod:`.service`), the one session
store (:mod:`.store`), the one rule between stored turns and a client's (:mod:`.reconcile`), and
the condenser — (history, question) → a standalone question, offline by rules (:mod:`.offline`)
or with one bounded LLM call that falls back to them (:mod:`.condense`) — every answerer's
default follow-up hook. It sits below the app kit and names no app.
"""
