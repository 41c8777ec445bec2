"""Every key binding of hlotop, declared once.

The footer, the help screen (``?``) and the command palette all read this module:
widgets and screens take their ``BINDINGS`` from :func:`bindings`, the help screen lists
:data:`SCOPES` in order, and the command palette offers each :class:`Key` that has a
``palette`` title.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding, BindingType


@dataclass(frozen=True, slots=True)
class Key:
    """One binding: Textual key names (comma-separated), the action it runs, and how
    it is described in the footer, the help screen and the command palette."""

    keys: str
    action: str
    description: str
    show: bool = True  # shown in the footer
    key_display: str | None = None
    palette: str | None = None  # command palette title; None: not in the palette
    help: str = ""  # one sentence for the help screen and the palette
    priority: bool = False

    def binding(self) -> Binding:
        return Binding(
            self.keys,
            self.action,
            self.description,
            show=self.show,
            key_display=self.key_display,
            priority=self.priority,
        )

    @property
    def display(self) -> str:
        """How the help screen writes the keys: ``"right, l"``."""
        if self.key_display:
            return self.key_display
        return ", ".join(_KEY_NAMES.get(k, k) for k in self.keys.split(","))


_KEY_NAMES = {
    "question_mark": "?",
    "slash": "/",
    "plus": "+",
    "minus": "-",
    "equals_sign": "=",
    "colon": ":",
    "left_square_bracket": "[",
    "right_square_bracket": "]",
    "shift+tab": "shift+tab",
    "escape": "esc",
    "enter": "enter",
    "up": "↑",
    "down": "↓",
    "left": "←",
    "right": "→",
    "pageup": "pgup",
    "pagedown": "pgdn",
    "shift+left": "shift+←",
    "shift+right": "shift+→",
}


@dataclass(frozen=True, slots=True)
class Scope:
    """Where a group of keys works."""

    name: str
    title: str
    keys: tuple[Key, ...]


# Cursor keys shared by the row lists (allocation tree, live set, diagnostics).
_LIST_CURSOR = (
    Key("up,k", "cursor_up", "Up", show=False, key_display="↑ k", help="Move the cursor up a row."),
    Key(
        "down,j",
        "cursor_down",
        "Down",
        show=False,
        key_display="↓ j",
        help="Move the cursor down a row.",
    ),
    Key("pageup", "page_up", "Page up", show=False, help="Move the cursor up a page."),
    Key("pagedown", "page_down", "Page down", show=False, help="Move the cursor down a page."),
    Key(
        "home,g",
        "first_row",
        "First row",
        show=False,
        key_display="home g",
        help="Go to the first row.",
    ),
    Key(
        "end,G", "last_row", "Last row", show=False, key_display="end G", help="Go to the last row."
    ),
    Key(
        "shift+left",
        "scroll_columns(-8)",
        "Scroll ←",
        show=False,
        key_display="shift+←",
        help="Scroll the columns left.",
    ),
    Key(
        "shift+right",
        "scroll_columns(8)",
        "Scroll →",
        show=False,
        key_display="shift+→",
        help="Scroll the columns right (long shapes and op_names).",
    ),
)


def _scroll_keys(up: tuple[str, str], down: tuple[str, str]) -> tuple[Key, ...]:
    """The keys of a scrolling body: a line up and down (``up`` and ``down``: their
    footer name and help), a page, the top and the bottom."""
    return (
        Key("up,k", "scroll_up", up[0], show=False, key_display="↑ k", help=up[1]),
        Key("down,j", "scroll_down", down[0], show=False, key_display="↓ j", help=down[1]),
        Key("pageup", "page_up", "Page up", show=False, help="Scroll up a page."),
        Key("pagedown", "page_down", "Page down", show=False, help="Scroll down a page."),
        Key(
            "home,g",
            "scroll_home",
            "Top",
            show=False,
            key_display="home g",
            help="Scroll to the top.",
        ),
        Key(
            "end,G",
            "scroll_end",
            "Bottom",
            show=False,
            key_display="end G",
            help="Scroll to the bottom.",
        ),
    )


SCOPES: tuple[Scope, ...] = (
    Scope(
        "app",
        "Everywhere",
        (
            Key(
                "q,ctrl+q",
                "quit",
                "Quit",
                key_display="q",
                palette="Quit hlotop",
                help="Leave hlotop (also ctrl+q).",
            ),
            # Textual binds ctrl+c to a "press ctrl+q to quit" notice; here it quits, as
            # in every terminal tool, from any screen (a priority binding: a modal
            # screen keeps the app's other bindings from its keys).
            Key(
                "ctrl+c",
                "copy_or_quit",
                "Quit",
                show=False,
                key_display="ctrl+c",
                priority=True,
                help="Leave hlotop; text selected (with the mouse, or in a text box) is "
                "copied instead.",
            ),
            Key(
                "question_mark",
                "help",
                "Help",
                key_display="?",
                palette="Show all keys",
                help="Every key binding, on one screen.",
            ),
            Key(
                "ctrl+p",
                "command_palette",
                "Commands",
                show=False,
                key_display="ctrl+p",
                priority=True,
                help="Open the command palette.",
            ),
        ),
    ),
    Scope(
        "main",
        "Main screen",
        (
            Key(
                "tab",
                "next_pane",
                "Next pane",
                show=False,
                key_display="tab",
                help="Focus the next pane (on small terminals: show it).",
            ),
            Key(
                "shift+tab",
                "previous_pane",
                "Previous pane",
                show=False,
                key_display="shift+tab",
                help="Focus the previous pane.",
            ),
            # priority: the search box opens before the next key is handled, so text
            # typed straight after "/" lands in it.
            Key(
                "slash",
                "search",
                "Search",
                key_display="/",
                priority=True,
                palette="Search values by name or op_name",
                help="Find a value by name or op_name (substring) and select it everywhere.",
            ),
            Key(
                "p",
                "jump_peak",
                "Peak",
                palette="Jump to the peak step",
                help="Move the timeline cursor to XLA's peak step.",
            ),
            Key(
                "P",
                "jump_curve_peak",
                "Curve max",
                show=False,
                key_display="P",
                palette="Jump to the occupied curve's maximum",
                help="Move the timeline cursor to the step where the curve's memory space "
                "has the most bytes occupied (▲).",
            ),
            Key(
                "m",
                "next_space",
                "Space",
                show=False,
                palette="Show the next memory space's curve",
                help="Draw the timeline's curve for the next memory space (HBM, VMEM, host ...).",
            ),
            Key(
                "colon",
                "goto_step",
                "Go to step",
                show=False,
                key_display=":",
                palette="Go to a schedule step",
                help="Type a step number and move the timeline cursor there.",
            ),
            Key(
                "o",
                "overview",
                "Figures",
                palette="Show the figures: memory_analysis(), peaks, memory spaces",
                help="The module's figures: XLA's peak, JAX's memory_analysis() sizes, "
                "the allocations by kind, each memory space's peak and padding.",
            ),
            Key(
                "a",
                "advice",
                "Advice",
                show=False,
                palette="Show the advice: what to change and the bytes it saves",
                help="What to change and the bytes it saves, largest first: donation, "
                "remat (what the forward pass saves for backward), replication, padding. "
                "⏎ selects an item's values.",
            ),
            Key(
                "s",
                "sort",
                "Sort",
                show=False,  # each pane's title says "s: sort ..."; the footer keeps ? Help
                palette="Sort the focused list by its next order",
                help="Sort the focused list by its next order, named in its title: the "
                "allocation tree by size or index; the timeline rows and the live set by "
                "size, start, end, name or space; the groups by bytes or name.",
            ),
            Key(
                "f",
                "filter",
                "Filter",
                show=False,  # the footer has no room left at 80 columns
                palette="Filter the focused list",
                help="Filter the focused list as you type: words a value's name, op_name, "
                "shape, space or kind holds, or field:word (op_name:attn shape:bf16 "
                "space:vmem kind:param); every word must match. ⏎ keeps it, esc clears it.",
            ),
            Key(
                "n",
                "next_match(1)",
                "Next match",
                show=False,
                palette="Select the next match of the last search",
                help="Select the next match of the last search (/); the step cursor moves "
                "into its live range when it is outside.",
            ),
            Key(
                "N",
                "next_match(-1)",
                "Previous match",
                show=False,
                key_display="N",
                palette="Select the previous match of the last search",
                help="Select the previous match of the last search.",
            ),
            Key(
                "left_square_bracket",
                "value_step('start')",
                "Defined",
                show=False,
                key_display="[",
                palette="Go to the step where the selected value is defined",
                help="Move the step cursor to where the selected value is defined (the "
                "first step of its live range).",
            ),
            Key(
                "right_square_bracket",
                "value_step('end')",
                "Dies",
                show=False,
                key_display="]",
                palette="Go to the step where the selected value dies",
                help="Move the step cursor to where the selected value dies (the last "
                "step of its live range).",
            ),
            Key(
                "y",
                "copy",
                "Copy",
                palette="Copy the selected value's name, op_name, shape or source",
                help="Copy the selected value's name, op_name, shape or source file:line to "
                "the clipboard (OSC 52: works over SSH and in tmux with set-clipboard on).",
            ),
            Key(
                "E",
                "edit_source",
                "Edit source",
                show=False,
                key_display="E",
                palette="Open the selected value's source in $EDITOR",
                help="Open the selected value's source file at its line in $VISUAL or "
                "$EDITOR (run as EDITOR +LINE FILE, as vi, nano and emacs take it).",
            ),
            Key(
                "v",
                "toggle_grouped",
                "Grouped",
                show=False,
                palette="Group the live set / show it flat",
                help="Show the live set at the timeline cursor grouped (a tree by phase, "
                "scope, opcode ...) or flat, one row a value.",
            ),
            Key(
                "e",
                "export",
                "Export",
                show=False,
                palette="Export the live set as CSV",
                help="Write the live set at the timeline cursor as a CSV file (its groups "
                "in the grouped view, one row a value in the flat one), named in a "
                "notification; never in the dump's folder.",
            ),
            Key(
                "d",
                "diagnostics",
                "Diagnostics",
                show=False,
                palette="Show diagnostics",
                help="Lines hlotop could not read and other warnings about the dump.",
            ),
            Key(
                "1",
                "focus_pane('allocations')",
                "Allocations",
                show=False,
                palette="Focus the allocation tree",
                help="Go to the allocation tree.",
            ),
            Key(
                "2",
                "focus_pane('timeline')",
                "Timeline",
                show=False,
                palette="Focus the live-range timeline",
                help="Go to the live-range timeline.",
            ),
            Key(
                "3",
                "focus_pane('live')",
                "Live set",
                show=False,
                palette="Focus the live set / peak breakdown",
                help="Go to the live set at the timeline cursor (the peak breakdown at the peak).",
            ),
            Key(
                "4",
                "focus_pane('detail')",
                "Detail",
                show=False,
                palette="Focus the value detail",
                help="Go to the selected value's detail.",
            ),
            Key(
                "escape",
                "back",
                "Back",
                show=False,
                key_display="esc",
                help="Clear the focused list's filter; without one, return to the pane "
                "you came from (small terminals).",
            ),
        ),
    ),
    Scope(
        "filter",
        "Filter",
        (
            Key(
                "enter",
                "keep",
                "Keep",
                key_display="⏎",
                help="Keep the filter (shown in the list's title) and return to the list.",
            ),
            Key(
                "escape",
                "clear",
                "Clear",
                key_display="esc",
                help="Clear the filter and return to the list.",
            ),
        ),
    ),
    Scope(
        "copy",
        "Copy",
        (
            Key("n", "copy_field('name')", "Name", help="Copy the value's name."),
            Key("o", "copy_field('op_name')", "op_name", help="Copy its op_name."),
            Key("s", "copy_field('shape')", "Shape", help="Copy its shape, with layout."),
            Key("l", "copy_field('source')", "Source", help="Copy its source file:line."),
            Key(
                "enter",
                "copy_highlighted",
                "Copy",
                key_display="⏎",
                help="Copy the highlighted field.",
            ),
            Key("escape", "cancel", "Cancel", key_display="esc", help="Close without copying."),
        ),
    ),
    # The modules view (hlotop DIR): the list's cursor keys, the screen's keys, and
    # backspace, which the main screen of a module opened from it gets too.
    Scope(
        "modules",
        "Modules of a directory",
        _LIST_CURSOR
        + (
            Key(
                "enter",
                "open_module",
                "Open",
                key_display="⏎",
                help="Open the module on the cursor's row in the browser (of modules "
                "compiled alike, the first).",
            ),
            Key(
                "s",
                "cycle_sort",
                "Sort",
                help="Sort by the next key: XLA peak, total, name, temp (# stays the "
                "XLA-peak rank).",
            ),
            Key(
                "slash",
                "filter",
                "Filter",
                key_display="/",
                help="Filter the modules by name as you type; ⏎ returns to the list.",
            ),
            Key(
                "escape",
                "clear_filter",
                "Clear filter",
                show=False,
                key_display="esc",
                help="Clear the name filter.",
            ),
            Key(
                "backspace",
                "back_to_modules",
                "Modules",
                key_display="backspace",
                help="In a module opened from the list, or while it loads: back to the "
                "list (esc too, where the main screen has no pane to return to).",
            ),
        ),
    ),
    Scope(
        "allocations",
        "Allocation tree",
        _LIST_CURSOR
        + (
            Key(
                "enter",
                "activate",
                "Open",
                key_display="⏎",
                help="Expand or collapse an allocation; on a value, show its detail.",
            ),
            Key(
                "right,l",
                "expand",
                "Expand",
                show=False,
                key_display="→ l",
                help="Expand an allocation to the values packed into it.",
            ),
            Key(
                "left,h",
                "collapse",
                "Collapse",
                show=False,
                key_display="← h",
                help="Collapse an allocation (on a value: go back to its allocation).",
            ),
        ),
    ),
    Scope(
        "timeline",
        "Live-range timeline",
        (
            Key(
                "left,h",
                "step(-1)",
                "Step ←",
                show=False,
                key_display="← h",
                help="Move the step cursor one schedule step left.",
            ),
            Key(
                "right,l",
                "step(1)",
                "Step →",
                show=False,
                key_display="→ l",
                help="Move the step cursor one schedule step right.",
            ),
            Key(
                "shift+left,H",
                "step_page(-1)",
                "Page ←",
                show=False,
                key_display="shift+← H",
                help="Move the step cursor a screen width left.",
            ),
            Key(
                "shift+right,L",
                "step_page(1)",
                "Page →",
                show=False,
                key_display="shift+→ L",
                help="Move the step cursor a screen width right.",
            ),
            Key("home", "first_step", "First step", show=False, help="Go to step 0."),
            Key("end", "last_step", "Last step", show=False, help="Go to the last step."),
            Key(
                "up,k",
                "row(-1)",
                "Row ↑",
                show=False,
                key_display="↑ k",
                help="Select the value on the row above.",
            ),
            Key(
                "down,j",
                "row(1)",
                "Row ↓",
                show=False,
                key_display="↓ j",
                help="Select the value on the row below.",
            ),
            Key("pageup", "row_page(-1)", "Page up", show=False, help="Up a page of rows."),
            Key("pagedown", "row_page(1)", "Page down", show=False, help="Down a page of rows."),
            Key(
                "plus,equals_sign",
                "zoom(1)",
                "Zoom in",
                show=False,
                key_display="+ =",
                help="Zoom in (more columns per step).",
            ),
            Key(
                "minus",
                "zoom(-1)",
                "Zoom out",
                show=False,
                key_display="-",
                help="Zoom out (more steps per column), as far as the whole schedule.",
            ),
            Key("z", "zoom_fit", "Fit", show=False, help="Zoom to fit the whole schedule."),
        ),
    ),
    Scope(
        "live",
        "Live set / peak breakdown",
        _LIST_CURSOR
        + (
            Key(
                "enter",
                "activate",
                "Open",
                key_display="⏎",
                help="On a value: show its detail; on a stack-trace node: expand or collapse it.",
            ),
            Key(
                "right,l",
                "expand",
                "Expand",
                show=False,
                key_display="→ l",
                help="Expand a stack-trace node; on a value row, scroll the columns right.",
            ),
            Key(
                "left,h",
                "collapse",
                "Collapse",
                show=False,
                key_display="← h",
                help="Collapse a stack-trace node (or go to its parent); on a value row, "
                "scroll the columns left.",
            ),
        ),
    ),
    Scope(
        "grouped",
        "Grouped live set",
        _LIST_CURSOR
        + (
            Key(
                "enter",
                "activate",
                "Open",
                key_display="⏎",
                help="On a group: open or close it; on a value: show its detail.",
            ),
            Key(
                "right,l",
                "expand",
                "Expand",
                show=False,
                key_display="→ l",
                help="Open a group (on an open one: go to its first row).",
            ),
            Key(
                "left,h",
                "collapse",
                "Collapse",
                show=False,
                key_display="← h",
                help="Close a group (else go to the group it is in).",
            ),
            Key(
                "b",
                "next_keys",
                "Group by",
                help="Group by the next keys: phase,scope; scope,opcode; kind,space; "
                "source; param; shape.",
            ),
            Key(
                "B",
                "type_keys",
                "Keys…",
                show=False,
                key_display="B",
                help="Type the grouping keys (scope, phase, source, opcode, shape, dtype, "
                "kind, space, param), outermost first.",
            ),
            Key(
                "t",
                "threshold(1)",
                "Fold more",
                help="Fold more: raise the share under which groups and values fold into "
                "'N values below X' (none, 0.1%, 1%, 5%).",
            ),
            Key(
                "T",
                "threshold(-1)",
                "Fold less",
                show=False,
                key_display="T",
                help="Fold less: lower that share.",
            ),
            Key(
                "i",
                "icicle",
                "Icicle",
                show=False,
                help="Draw the grouping as an icicle, the terminal wide: a bar a group "
                "(a scope split at its /), where it lies among the step's bytes, inside "
                "its parent's.",
            ),
            Key(
                "u",
                "toggle_accounting",
                "Padded",
                help="Count logical bytes (each value's shape, no padding, as XLA's peak) "
                "or occupied ones (allocation bytes in use, padding included, shared "
                "slices once).",
            ),
        ),
    ),
    Scope(
        "detail",
        "Value detail",
        (
            *_scroll_keys(
                ("Scroll up", "Scroll the detail up."), ("Scroll down", "Scroll the detail down.")
            ),
        ),
    ),
    Scope(
        "icicle",
        "Icicle",
        _LIST_CURSOR
        + (
            Key(
                "escape,q,i",
                "close",
                "Close",
                key_display="esc q i",
                help="Close the icicle (the row's node is named in full above the rows).",
            ),
        ),
    ),
    Scope(
        "search",
        "Search",
        (
            Key(
                "enter",
                "choose",
                "Select",
                key_display="⏎",
                help="Select the highlighted match in every pane.",
            ),
            Key(
                "down",
                "results_down",
                "Next match",
                show=False,
                key_display="↓",
                help="Highlight the next match.",
            ),
            Key(
                "up",
                "results_up",
                "Previous match",
                show=False,
                key_display="↑",
                help="Highlight the previous match.",
            ),
            Key("escape", "close", "Close", key_display="esc", help="Close the search."),
        ),
    ),
    Scope(
        "diagnostics",
        "Diagnostics",
        _LIST_CURSOR
        + (
            Key(
                "enter",
                "jump",
                "Go to",
                key_display="⏎",
                help="Close the list and select the allocation or value printed at (or "
                "nearest above) the diagnostic's line.",
            ),
        ),
    ),
    Scope(
        "advice",
        "Advice",
        _LIST_CURSOR
        + (
            Key(
                "enter",
                "jump",
                "Select",
                key_display="⏎",
                help="Close the list and select the item's largest value in every pane, "
                "with the timeline cursor on its step.",
            ),
        ),
    ),
    Scope(
        "oom",
        "Out-of-memory buffers",
        _LIST_CURSOR
        + (
            Key(
                "enter",
                "open",
                "Open",
                key_display="⏎",
                help="On a buffer linked to a value of --dump's module: open that module "
                "in the browser with the value selected (backspace comes back); on a "
                "group: close or open it.",
            ),
            Key(
                "s",
                "cycle_sort",
                "Sort",
                help="Sort the buffers by the next key: size (as printed, the largest "
                "first), op_name, shape.",
            ),
            Key(
                "b",
                "cycle_group",
                "Group",
                help="Group the buffers by the next key: scope (from the op_name, layer "
                "indices folded), shape, none.",
            ),
            Key(
                "slash,f",
                "filter",
                "Filter",
                key_display="/ f",
                help="Filter the buffers as you type: words their op_name, shape, label, "
                "source, type or linked value holds, or field:word (op_name:attn "
                "shape:bf16); ⏎ returns to the list.",
            ),
            Key(
                "escape",
                "clear_or_quit",
                "Clear",
                show=False,
                key_display="esc",
                help="Clear the filter; without one, leave hlotop.",
            ),
            Key(
                "m",
                "next_message",
                "Message",
                show=False,
                help="Show the text's next out-of-memory message (of several), its "
                "figures and buffers.",
            ),
            Key(
                "backspace",
                "back_to_modules",
                "Buffers",
                key_display="backspace",
                help="In the module opened with ⏎, or while it loads: back to the buffers "
                "(esc too, where the main screen has no pane to return to).",
            ),
            Key(
                "o",
                "whole_text",
                "Text",
                help="The whole report, every message's figures, tables, buffers and "
                "groups, as --summary prints it (esc closes it).",
            ),
        ),
    ),
    Scope(
        "text",
        "Out-of-memory text",
        (
            Key(
                "q,escape,ctrl+c",
                "quit_text",
                "Quit",
                key_display="q esc",
                help="Leave hlotop (also ctrl+c).",
            ),
        ),
    ),
    Scope(
        "goto",
        "Go to step",
        (Key("escape", "cancel", "Cancel", key_display="esc", help="Close without moving."),),
    ),
    Scope(
        "group_keys",
        "Group by",
        (Key("escape", "cancel", "Cancel", key_display="esc", help="Close without regrouping."),),
    ),
    # hlotop diff OLD NEW (ui/screens/diff.py): each pane binds the keys it acts on.
    Scope(
        "diff",
        "Diff browser",
        _LIST_CURSOR
        + (
            Key(
                "enter",
                "activate",
                "Open",
                key_display="⏎",
                help="Groups: open or close a group; on a value (there or in the values "
                "list): show OLD and NEW side by side in the detail.",
            ),
            Key(
                "right,l",
                "right",
                "Right",
                show=False,
                key_display="→ l",
                help="Groups: open a group (on an open one: go to its first row); "
                "timeline: move the cursor right; values: scroll the columns right.",
            ),
            Key(
                "left,h",
                "left",
                "Left",
                show=False,
                key_display="← h",
                help="Groups: close a group (else go to the group it is in); timeline: "
                "move the cursor left; values: scroll the columns left.",
            ),
            Key(
                "b",
                "next_keys",
                "Group by",
                help="Group the change by the next keys: phase,scope; scope,opcode; "
                "kind,space; source; param; shape.",
            ),
            Key(
                "B",
                "type_keys",
                "Keys…",
                show=False,
                key_display="B",
                help="Type the grouping keys (scope, phase, source, opcode, shape, dtype, "
                "kind, space, param), outermost first.",
            ),
            Key(
                "c",
                "next_class",
                "Class",
                help="Values: show the next change class (all, added, removed, grown, "
                "shrunk, entered peak, left peak, unchanged; those with no value skipped).",
            ),
            Key("tab", "next_pane", "Next pane", show=False, help="Show the next pane."),
            Key(
                "shift+tab",
                "previous_pane",
                "Previous pane",
                show=False,
                help="Show the previous pane.",
            ),
            *(
                Key(str(n), f"focus_pane('{pane}')", title, show=False, help=f"Go to {what}.")
                for n, pane, title, what in (
                    (1, "figures", "Figures", "the figures of both sides and the change"),
                    (2, "groups", "Groups", "the change by group"),
                    (3, "timeline", "Timeline", "both sides' occupied curves"),
                    (4, "values", "Values", "the value changes"),
                    (5, "detail", "Detail", "the selected value on both sides"),
                )
            ),
            Key(
                "escape",
                "back",
                "Back",
                show=False,
                key_display="esc",
                help="Return to the pane you came from (small terminals).",
            ),
        ),
    ),
    Scope(
        "scroll",
        "Help, figures and out-of-memory text",
        (*_scroll_keys(("Up", "Scroll up a line."), ("Down", "Scroll down a line.")),),
    ),
    Scope(
        "modal",
        "Help, figures and diagnostics",
        (
            Key(
                "escape,q,question_mark",
                "close",
                "Close",
                key_display="esc q ?",
                help="Close this screen.",
            ),
        ),
    ),
)

_BY_NAME = {scope.name: scope for scope in SCOPES}


def bindings(scope: str) -> list[BindingType]:
    """The Textual ``BINDINGS`` of ``scope`` (a :class:`Scope` name)."""
    return [key.binding() for key in _BY_NAME[scope].keys]


def keys(scope: str) -> tuple[Key, ...]:
    return _BY_NAME[scope].keys


def palette_keys() -> list[Key]:
    """The keys offered in the command palette: the main screen's actions first, in
    declaration order, then help and quit."""
    scopes = [s for s in SCOPES if s.name != "app"] + [_BY_NAME["app"]]
    return [key for scope in scopes for key in scope.keys if key.palette]
