"""What several screens draw, in one place: text.py (md_escape), formatting.py (show_table, numbers),
palette.py (the charts' one palette), downloads.py (table downloads), deltas.py (a score's change), figure.py (a
caption's picture and references) and figure_html.py (its markup), newer.py (the newer-revision notice), keys.py (the
judging pages' keyboard flow), spans.py (the error-span editor)."""
