// README promises that had no test of their own (issue 15), against the real lab.
