"""The frame around every page: frame.py (the page guard page_setup, the header, the sidebar, the project picker,
progress), team_choice.py (the team picker the lead pages share, remembered as the project is) and page_data.py
(what several pages read alike). annotator.ui hands their public names on."""
