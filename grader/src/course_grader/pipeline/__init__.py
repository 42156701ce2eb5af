"""The stages' own data: which notebooks a class handed in and of which lesson
(:mod:`.grading`, which also turns runs into grade rows), the points (:mod:`.points`), the
roster (:mod:`.roster`), the cache of unchanged notebooks (:mod:`.cache`) and progress on the
terminal (:mod:`.progress`). Uses :mod:`course_grader.isolation`, never the outputs.
"""
