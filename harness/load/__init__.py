"""Load generation: the datasets, the HTTP clients, one point driven in one process or
several."""
