"""The companion page: what hearth hears, thinks and keeps, on a small local web page.

``create_app`` builds the ASGI application from the running appliance's own pieces (the live view,
the stores and their tool executor, the conversation record, the assistant's turn results);
``WebServer`` serves it with uvicorn inside hearth's event loop.
"""

from firmware_py.web.app import PageSources, WebSettings, create_app
from firmware_py.web.server import WebServer

__all__ = ["PageSources", "WebServer", "WebSettings", "create_app"]
