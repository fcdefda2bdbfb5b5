"""What a knowledge base's owners see and do, shared by the HTTP routes and the CLI.

The engines (:mod:`zhiwen.curation`, :mod:`zhiwen.kb.faq`, :mod:`zhiwen.faq`,
:mod:`zhiwen.questionlog`) hold the rules; this package turns their objects into the shapes
the interfaces show (:mod:`.views`) and runs the few steps an owner's action takes across
them (:mod:`.faq`: an FAQ entry written from a form, a file or a logged question).
"""
