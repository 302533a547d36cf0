"""Who the run acts for and what it keeps: identity.py (the session's user, local mode), state.py (the session's
keys), caches.py (the store and live frames the process keeps), cookie.py with cookie.js (the HttpOnly session
cookie, tab side), routes.py (its HTTP routes), origin_guard.py (the websocket origin check), password.py (Change
my password, the generated-password dialog)."""
