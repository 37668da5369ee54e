"""`marbles-bench`, the headless front end: its commands and their options, the options both
command lines share, and the listings generated from the declarations."""
