"""The results viewer under ``/ui``: runs, a run, a case, two runs compared.

Pages are shells with no data (public, like ``/docs``); their script fetches each page's
content as an HTML fragment rendered here from the same services as the JSON API, sending
the API key (kept in session storage) as the bearer token. So a key sees exactly what it
sees through the API, and no key ever appears in a URL or a cookie. Charts are SVG drawn
server-side; the stylesheet and script are served under ``/ui/assets`` (nothing from a CDN).
"""
