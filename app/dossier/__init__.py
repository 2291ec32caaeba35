"""A submission's dossier: its page and its API answer, which bring together what every
feature knows of one submission. It sits above the features it reads."""
