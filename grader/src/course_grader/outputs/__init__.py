"""What the grader writes for people and for the LMS, each a function of the class's results.

:mod:`.results` computes the totals once (and keeps them for regrades); :mod:`.writers` lists
the files; :mod:`.report` is the feedback and the class's report page, :mod:`.similarity` the
answers that look alike, :mod:`.flags` what the instructor should look at besides the grades,
and :mod:`.files` writes only what changed.
"""
