
import time as _time

# When the program started (perf_counter s): the window's start-up marks count from here.
STARTED = _time.perf_counter()
