"""Every exercise's answer, one module per lesson (``lessonNN.py``), generated from the lesson's
solution regions and ``### ANSWER`` lines by ``make notebooks`` (tools/build_lessons.py).

The lesson's solution region is an answer's one home: ``checks.<name>.reference`` is the function
of the same name here, ``checks.<name>.solution()`` shows its source, and a prediction's
``answer`` is the constant of its name. The modules are never edited by hand;
``make check-notebooks`` (and ``make test``) fails when one differs from its lesson.
"""
