"""New study: a form per recipe, built from the command line's own options, with the
equivalent command shown (copy with ctrl+y) and validated before launch by the real parser and
the command's own pre-run checks (:func:`robustlab.tui.forms.check`).

One row per option (label, input), so an 80×24 terminal shows a dozen fields; the focused
field's help is shown once below the form. A rejected form stays filled: the error is shown
beside the field at fault (and that input is marked), and Launch stays disabled.
"""

from __future__ import annotations

from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import (
    Button,
    Checkbox,
    Footer,
    Header,
    Input,
    Label,
    OptionList,
    Select,
    Static,
)

from robustlab.tui import forms, launch
from robustlab.tui.messages import Loaded
from robustlab.tui.plain import PlainInput, plain

#: the "nothing chosen" value of a Select (Textual 8: Select.NULL; Select.BLANK is False there
#: and is refused as a value, which broke the form of any choice option without a default)
_NO_CHOICE = getattr(Select, "NULL", Select.BLANK)


#: bounds of the form's label column (cells): the inputs keep at least ~28 cells at 80 columns
LABEL_MIN, LABEL_MAX = 12, 24


class NewStudyScreen(Screen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("ctrl+l", "launch", "Launch"),
        Binding("ctrl+y", "copy", "Copy command"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.recipes: list[forms.Recipe] = []
        self.recipe: forms.Recipe | None = None
        self.argv: list[str] = []
        self.error: str | None = "loading"
        self.error_field: str | None = None  # dest of the field the error is about
        self._gen = 0  # form generation: widget ids stay unique while an old form is removed

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="new-study"):
            yield OptionList(id="recipes")
            with Vertical(id="form-side"):
                yield VerticalScroll(id="form")
                yield Static("", id="field-help")
                yield Static("", id="command", classes="command")
                yield Static("", id="form-error", classes="error")
                yield Button("Launch (ctrl+l)", variant="success", id="launch", disabled=True,
                             compact=True)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sub_title = "new study"
        self._load_recipes()

    @work(thread=True, exclusive=True)
    def _load_recipes(self) -> None:
        """Building the parser imports every command module: keep it off the event loop."""
        try:
            self.post_message(Loaded(self.app.settings.recipes()))
        except Exception as exc:  # noqa: BLE001
            self.post_message(Loaded(error=f"cannot read the study commands: {exc}"))

    def on_loaded(self, message: Loaded) -> None:
        if message.error or not message.view:
            self.query_one("#form-error", Static).update(plain(
                message.error or "no study commands are installed (robustlab learnability, "
                "attack, bias, cross-domain …)", lines=True))
            return
        self.recipes = message.view
        options = self.query_one("#recipes", OptionList)
        options.add_options([r.name for r in self.recipes])
        names = [r.name for r in self.recipes]
        last = getattr(self.app, "last_recipe", None)
        options.highlighted = names.index(last) if last in names else 0
        options.focus()

    @on(OptionList.OptionHighlighted, "#recipes")
    async def _recipe(self, event: OptionList.OptionHighlighted) -> None:
        self.recipe = self.recipes[event.option_index]
        await self._build_form()

    def _reveal(self, dest: str) -> None:
        """Centre a field whose error just appeared, so the field and the whole message under it
        are in view (scrolling only the message into view could leave its last line clipped,
        and focusing the field then centred it or not depending on which came first)."""
        try:
            field = self.field(dest)
        except NoMatches:  # the form was rebuilt meanwhile
            return
        self.scroll_to_center(field, animate=False, origin_visible=True)

    def field(self, dest: str) -> Any:
        """The input widget of option ``dest`` in the current form."""
        return self.query_one(f"#f{self._gen}-{dest}")

    @on(OptionList.OptionSelected, "#recipes")
    def _into_form(self) -> None:
        inputs = self.query("#form Input, #form Select, #form Checkbox")
        if inputs:
            inputs.first().focus()

    async def _build_form(self) -> None:
        form = self.query_one("#form", VerticalScroll)
        self._gen += 1
        gen = self._gen
        await form.remove_children()
        if gen != self._gen:
            return  # another recipe was highlighted meanwhile
        r = self.recipe
        assert r is not None
        # help texts, errors and the command are plain text: "hf:NAME[/CONFIG]" in a message
        # or "[/b]" typed into a field is shown as it is, never parsed as markup
        widgets: list[Any] = [Static(plain(r.help or r.name, lines=True), classes="recipe-help")]
        # the label column is as wide as this recipe's longest label (--checkpoint-interval was
        # cut at a fixed 20), within bounds that leave the inputs room at 80 columns
        width = min(LABEL_MAX, max([len(f.label) + (2 if f.required else 0) for f in r.fields
                                    if f.kind != "flag"] + [LABEL_MIN]) + 1)
        # the values this recipe was last launched with (a run that failed is fixed and
        # launched again without typing everything anew); --out gets a fresh default
        memory = (getattr(self.app, "form_memory", None) or {}).get(r.name, {})
        for f in r.fields:
            wid = f"f{gen}-{f.dest}"
            label = f.label + (" *" if f.required else "")
            kept = memory.get(f.dest) if f.flag != "--out" else None
            if f.kind == "flag":
                control: Any = Checkbox(plain(f.label), bool(kept), id=wid, compact=True)
            elif f.kind == "choice":
                choice = kept if kept in f.choices else f.default_text()
                control = Select([(c, c) for c in f.choices],
                                 value=choice if choice in f.choices
                                 else _NO_CHOICE, allow_blank=not f.default, id=wid,
                                 compact=True)
            else:
                value = (forms.default_out(r, self.app.settings.runs_root,
                                            self.app.settings.clock()) if f.flag == "--out"
                         else kept if isinstance(kept, str) else f.default_text())
                control = PlainInput(value, id=wid, compact=True)
            name = Label(plain("" if f.kind == "flag" else label), classes="field-label")
            name.styles.width = width
            row = Horizontal(name, control, classes="field-row")
            error = Static("", id=f"e{gen}-{f.dest}", classes="field-error")
            error.styles.padding = (0, 0, 0, width)
            widgets += [row, error]
        await form.mount_all(widgets)
        self.call_after_refresh(self._update_command)

    def _dest_of(self, widget: Any) -> str | None:
        wid = getattr(widget, "id", None) or ""
        prefix = f"f{self._gen}-"
        return wid[len(prefix):] if wid.startswith(prefix) else None

    def on_descendant_focus(self, event: Any) -> None:
        """Show the focused field's help (and the names it can take) below the form."""
        dest = self._dest_of(event.widget)
        if dest is None or self.recipe is None:
            return
        f = next((f for f in self.recipe.fields if f.dest == dest), None)
        if f is not None:
            text = " · ".join(t for t in (f"{f.label}: {f.help}" if f.help else f.label,
                                          forms.hints(f)) if t)
            self.query_one("#field-help", Static).update(plain(text, lines=True))

    def _values(self) -> dict[str, Any]:
        values: dict[str, Any] = {}
        assert self.recipe is not None
        for f in self.recipe.fields:
            try:
                w = self.field(f.dest)
            except Exception:  # noqa: BLE001 - the form is being rebuilt
                continue
            v = w.value
            values[f.dest] = None if v is _NO_CHOICE or v is Select.BLANK else v
        return values

    @on(Input.Changed)
    @on(Select.Changed)
    @on(Checkbox.Changed)
    def _update_command(self) -> None:
        if self.recipe is None:
            return
        self.argv = forms.build_argv(self.recipe, self._values())
        self.query_one("#command", Static).update(plain("$ " + launch.command_string(self.argv)))
        self.error = "checking the options …"  # nothing launches before this edit is checked
        self.query_one("#launch", Button).disabled = True
        self._validate(list(self.argv))

    def _check(self, argv: list[str]) -> tuple[str | None, str | None]:
        if self.recipe is None:
            return "no recipe", None
        error, dest = forms.check(self.recipe, argv, self.app.settings.command_parser())
        if error is None and not launch.out_dir_of(argv):
            error, dest = "--out DIR is required: it is the run directory the TUI follows", "out"
        return error, dest

    @work(thread=True, exclusive=True, group="validate")
    def _validate(self, argv: list[str]) -> None:
        error, dest = self._check(argv)
        self.app.call_from_thread(self._set_error, argv, error, dest)

    def _set_error(self, argv: list[str], error: str | None, dest: str | None = None) -> None:
        if argv != self.argv:
            return  # stale validation of an older edit
        fresh = (error, dest) != (self.error, self.error_field)
        self.error, self.error_field = error, dest
        self.query_one("#form-error", Static).update(plain(error or "", lines=True))
        self.query_one("#launch", Button).disabled = error is not None
        for box in self.query(".field-error"):
            at_fault = box.id == f"e{self._gen}-{dest}"
            box.update(plain(f"↳ {error}" if at_fault and error else "", lines=True))
            box.set_class(at_fault and bool(error), "-shown")
            if at_fault and error and fresh:
                self.call_after_refresh(self._reveal, dest)
        for f in self.recipe.fields if self.recipe else []:
            try:
                self.field(f.dest).set_class(f.dest == dest and error is not None, "-invalid")
            except Exception:  # noqa: BLE001 - the form is being rebuilt
                continue

    def action_copy(self) -> None:
        self.app.copy_to_clipboard(launch.command_string(self.argv))
        self.notify("command copied (OSC 52 clipboard)")

    @on(Button.Pressed, "#launch")
    def action_launch(self) -> None:
        if self.error is None:  # checked once more, synchronously: what launches is what passed
            error, dest = self._check(list(self.argv))
            if error is not None:
                self._set_error(self.argv, error, dest)
        if self.error is not None:
            self.notify(f"cannot launch: {self.error}", severity="error")
            if self.error_field:
                try:
                    self.field(self.error_field).focus()
                except Exception:  # noqa: BLE001
                    pass
            return
        if self.recipe is not None and hasattr(self.app, "form_memory"):
            self.app.form_memory[self.recipe.name] = self._values()
            self.app.last_recipe = self.recipe.name
        self.app.launch_study(list(self.argv))
