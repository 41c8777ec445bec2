"""Every use hlotop makes of Textual's private API, each with the reason for it.

Textual is pinned (``textual==8.2.8`` in pyproject.toml); a new release may rename or
remove any name used here, and this module is the only place to look when it does. Each
function says which private name it touches, why no public API would do, and what to
check on an upgrade. Nothing else under ``hlotop/ui`` touches a private Textual name
(``tests/test_textual_compat.py`` checks that).
"""

from __future__ import annotations

from rich.console import RenderableType
from textual.app import App
from textual.geometry import Size
from textual.screen import Screen
from textual.scroll_view import ScrollView
from textual.widget import Widget


def set_virtual_size(widget: Widget, size: Size) -> None:
    """Change a Line API widget's scrollable size without a layout pass of the whole
    screen.

    Why private: assigning ``widget.virtual_size`` (public) asks the screen for a
    layout, which costs tens of ms at 120x40 on every step or selection that changes
    a row count. Setting the reactive without its watcher (public ``set_reactive``)
    leaves the scrollbars with the old size; ``Widget._scroll_update`` is what Textual
    itself calls to resize them when only the virtual size changed
    (``Widget._size_updated`` with ``layout=False``). If a scrollbar appears or goes,
    Textual asks for the layout by itself. On an upgrade: check that
    ``_size_updated`` still calls ``_scroll_update(virtual_size)``."""
    if widget.virtual_size == size:
        return
    if not widget.is_mounted or not widget.container_size:
        widget.virtual_size = size  # not laid out yet: the first layout takes it
        return
    widget.set_reactive(Widget.virtual_size, size)
    widget._scroll_update(size)
    widget.refresh()


_SCROLLBAR_STYLES = (
    "scrollbar_background",
    "scrollbar_background_hover",
    "scrollbar_background_active",
    "scrollbar_color",
    "scrollbar_color_hover",
    "scrollbar_color_active",
    "scrollbar_corner_color",
    "background",  # a see-through scrollbar background is drawn over it
)


class SteadyScrollView(ScrollView):
    """A ``ScrollView`` whose scrollbars are drawn again only when something they show
    changed: their widget's size, virtual size or container size, or a colour of them.

    A scrollbar redrawn with nothing changed is a second frame after the key's own
    (the scrollbar's message comes after the frame has started), and Textual 8.2.8's
    update timer, paused between frames, comes back one or two frame periods later
    than the next: a key that moves the focus (``f``, ``tab``, a dialog opened or
    closed) showed its effect in the first frame, 6-16 ms, and was done only 45-65 ms
    after the key on the 46 MB benchmark dump. Two things redrew them each time:

    - every layout pass of the screen calls ``_size_updated`` of every widget, and
      ``ScrollView._size_updated`` compares the widget's virtual size with the one the
      layout arranged (the container's, which a Line API widget never has), so it
      always found a change and redrew both scrollbars (``_scroll_update``);
    - every restyle of the widget (the focus moved in or out, a class added) sets each
      of its rules again, and setting a scrollbar colour redraws the scrollbars
      whether or not it changed (``ScrollbarColorProperty.__set__``, which redraws
      only the scrollbars shown: they count as hidden while the rules are set, and
      are redrawn after when a colour did change).

    Why private: ``_size_updated`` and the ``_size``/``_container_size`` it keeps are
    Textual's own. On an upgrade: check that ``_size_updated`` still reads only these
    sizes and the styles' gutter, and that ``ScrollbarColorProperty.__set__`` still
    looks at ``show_vertical_scrollbar``/``show_horizontal_scrollbar`` (a test counts
    the frames of ``f``, tests/ui/test_ui_selection.py)."""

    _scrollbars_for: tuple[Size, Size, Size, int, int] | None = None

    def _scrollbar_inputs(self, size: Size, container_size: Size) -> tuple:
        """What ``_scroll_update`` sizes the scrollbars from: the sizes, and the room
        each scrollbar takes (a scrollbar shown or hidden since changes the other's)."""
        return (
            size,
            self.virtual_size,
            container_size,
            self.scrollbar_size_vertical,
            self.scrollbar_size_horizontal,
        )

    def _size_updated(
        self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True
    ) -> bool:
        if self._scrollbar_inputs(size, container_size) == self._scrollbars_for:
            return self._container_size != container_size
        changed = super()._size_updated(size, virtual_size, container_size, layout)
        self._scrollbars_for = self._scrollbar_inputs(size, container_size)
        return changed

    def update_node_styles(self, animate: bool = True) -> None:
        styles = self.styles
        before = [getattr(styles, name) for name in _SCROLLBAR_STYLES]
        vertical, horizontal = self.show_vertical_scrollbar, self.show_horizontal_scrollbar
        self.set_reactive(ScrollView.show_vertical_scrollbar, False)
        self.set_reactive(ScrollView.show_horizontal_scrollbar, False)
        try:
            super().update_node_styles(animate)
        finally:
            self.set_reactive(ScrollView.show_vertical_scrollbar, vertical)
            self.set_reactive(ScrollView.show_horizontal_scrollbar, horizontal)
        if [getattr(styles, name) for name in _SCROLLBAR_STYLES] != before:
            if vertical:
                self.vertical_scrollbar.refresh()
            if horizontal:
                self.horizontal_scrollbar.refresh()


class UnhandledExceptionHook:
    """Mix into an ``App`` (before ``App`` in the bases) to be told of every exception
    nobody caught inside the running app: :meth:`unhandled_exception` is called with it.

    Why private: Textual 8.2.8 has no public hook for them; every one (a key handler,
    a message handler, a worker, a paint) goes to ``App._handle_exception``, which
    prints a Rich traceback with locals once the app has exited. On an upgrade: check
    that ``_handle_exception`` is still the one place they all go."""

    def _handle_exception(self, error: Exception) -> None:
        self.unhandled_exception(error)

    def unhandled_exception(self, error: Exception) -> None:
        """Textual's own handling (override it to replace it)."""
        super()._handle_exception(error)  # type: ignore[misc]


def keep_exception_for_tests(app: App, error: BaseException) -> None:
    """Keep ``error`` as the app's first unhandled exception, as
    ``App._handle_exception`` does, so that ``App.run_test`` re-raises it when the test
    ends (a test that drives the app then sees the bug).

    Why private: ``run_test`` reads ``App._exception``, set with
    ``App._exception_event``, and nothing public sets them."""
    if getattr(app, "_exception", None) is None:
        app._exception = error  # type: ignore[assignment]
        app._exception_event.set()


def set_exit_message(app: App, renderable: RenderableType) -> None:
    """Make ``renderable`` the only message printed when the app has exited.

    Why private: ``App.exit(message=...)`` appends to ``App._exit_renderables``, and
    Textual prints every entry plus a note when there are several; a crash must print
    exactly one line, whatever was queued before."""
    app._exit_renderables[:] = [renderable]


def stop_processing_messages(app: App) -> None:
    """Make the app stop at once, without waiting for its message queue to reach the
    exit message (the app may be broken: a crash).

    Why private: this is what ``App._handle_exception`` itself does
    (``App._close_messages_no_wait``); ``App.exit`` only queues the exit."""
    app._close_messages_no_wait()


def forget_queried_widgets(node: Widget) -> None:
    """Drop what ``node.query_one`` remembers, after children it found were removed.

    Why private: ``query_one`` keeps each answer in ``DOMNode._query_one_cache`` (an
    LRU of 1024) under the DOM's change count; a removed widget stays there, and all
    it holds, until 1024 later queries push it out, and nothing public clears it
    (Textual clears it only when the node itself is removed). The browser replaces its
    panes when the whole dump takes a first look's place, and the first look's panes
    held that dump: 30 000 allocations and their indexes at 46 MB, 13 MB of peak memory
    kept for nothing. On an upgrade: check that the cache is still this attribute and
    still holds removed widgets."""
    node._query_one_cache.clear()


def screen_lines(screen: Screen) -> list[str]:
    """The text of every line of ``screen`` as last composed, for tests.

    Why private: the compositor (``Screen._compositor``) is the only place that holds
    the screen as painted, all widgets and layers combined; ``App.export_screenshot``
    gives an SVG instead of text."""
    return ["".join(seg.text for seg in strip) for strip in screen._compositor.render_strips()]


def screen_strips(screen: Screen):
    """The Strips of every line of ``screen`` as last composed, styles included (for
    tests of contrast).

    Why private: as :func:`screen_lines`, the compositor (``Screen._compositor``)."""
    return list(screen._compositor.render_strips())


class FrameCounter:
    """Counts the frames an app draws from now on (for tests: one frame per key).

    Why private: every frame, whole or partial, goes through ``App._display``; no
    public event says a frame was drawn."""

    def __init__(self, app: App):
        self.frames = 0
        display = app._display

        def counted(screen, renderable) -> None:
            self.frames += 1
            display(screen, renderable)

        app._display = counted  # type: ignore[method-assign]


def event_loop_of(app: App):
    """The asyncio event loop ``app`` runs on, or None when it is not running.

    Why private: a signal handler has to hand the app its exit on the app's own loop
    (``loop.call_soon_threadsafe``, which wakes the loop up), and Textual 8.2.8 keeps
    the loop as ``App._loop`` only (``App.call_from_thread`` refuses the app's own
    thread, where Python runs signal handlers). On an upgrade: check that ``_loop`` is
    still set while the app runs and None after."""
    return app._loop


def restore_terminal(app: App) -> None:
    """Leave application mode now, as the app's exit does (the alternate screen,
    mouse reporting, the hidden cursor and raw mode undone), when its exit cannot be
    waited for. Raises nothing.

    Why private: Textual 8.2.8 restores the terminal only on its exit path
    (``Driver.stop_application_mode``), and the driver is ``App._driver``. On an
    upgrade: check both names."""
    driver = app._driver
    if driver is None:
        return
    try:
        driver.stop_application_mode()
    except Exception:  # noqa: BLE001 - a terminal gone (SIGHUP): nothing to restore
        pass
