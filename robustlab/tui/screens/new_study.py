"""New study: a form per recipe, built from the command line's own options, with the
equivalent command shown (copy with ctrl+y) and validated by the real parser before launch."""

from __future__ import annotations

from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
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
        self._gen = 0  # form generation: widget ids stay unique while an old form is removed

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="new-study"):
            yield OptionList(id="recipes")
            with Vertical(id="form-side"):
                yield VerticalScroll(id="form")
                yield Static("", id="command", classes="command")
                yield Static("", id="form-error", classes="error")
                yield Button("Launch (ctrl+l)", variant="success", id="launch", disabled=True)
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
            self.query_one("#form-error", Static).update(
                message.error or "no study commands are installed (robustlab learnability, "
                "attack, bias, cross-domain …)")
            return
        self.recipes = message.view
        options = self.query_one("#recipes", OptionList)
        options.add_options([r.name for r in self.recipes])
        options.highlighted = 0
        options.focus()

    @on(OptionList.OptionHighlighted, "#recipes")
    async def _recipe(self, event: OptionList.OptionHighlighted) -> None:
        self.recipe = self.recipes[event.option_index]
        await self._build_form()

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
        widgets: list[Any] = [Static(r.help or r.name, classes="recipe-help")]
        for f in r.fields:
            wid = f"f{gen}-{f.dest}"
            label = f.label + (" *" if f.required else "")
            if f.kind == "flag":
                widgets.append(Checkbox(f"{f.label}  {f.help}", False, id=wid, compact=True))
                continue
            widgets.append(Label(label, classes="field-label"))
            if f.kind == "choice":
                widgets.append(Select([(c, c) for c in f.choices],
                                      value=f.default_text() if f.default_text() in f.choices
                                      else Select.BLANK, allow_blank=not f.default, id=wid,
                                      compact=True))
            else:
                value = (forms.default_out(r, self.app.settings.runs_root) if f.flag == "--out"
                         else f.default_text())
                widgets.append(Input(value, id=wid, compact=True))
            hint = forms.hints(f)
            text = " · ".join(t for t in (f.help, hint) if t)
            if text:
                widgets.append(Static(text, classes="field-help"))
        await form.mount_all(widgets)
        self.call_after_refresh(self._update_command)

    def _values(self) -> dict[str, Any]:
        values: dict[str, Any] = {}
        assert self.recipe is not None
        for f in self.recipe.fields:
            try:
                w = self.field(f.dest)
            except Exception:  # noqa: BLE001 - the form is being rebuilt
                continue
            v = w.value
            values[f.dest] = None if v is Select.BLANK else v
        return values

    @on(Input.Changed)
    @on(Select.Changed)
    @on(Checkbox.Changed)
    def _update_command(self) -> None:
        if self.recipe is None:
            return
        self.argv = forms.build_argv(self.recipe, self._values())
        self.query_one("#command", Static).update("$ " + launch.command_string(self.argv))
        self._validate(list(self.argv))

    @work(thread=True, exclusive=True, group="validate")
    def _validate(self, argv: list[str]) -> None:
        parser = self.app.settings.parser()
        error = forms.validate(self.recipe, argv, parser) if self.recipe else "no recipe"
        if error is None and not launch.out_dir_of(argv):
            error = "--out DIR is required: it is the run directory the TUI follows"
        self.app.call_from_thread(self._set_error, argv, error)

    def _set_error(self, argv: list[str], error: str | None) -> None:
        if argv != self.argv:
            return  # stale validation of an older edit
        self.error = error
        self.query_one("#form-error", Static).update(error or "")
        self.query_one("#launch", Button).disabled = error is not None

    def action_copy(self) -> None:
        self.app.copy_to_clipboard(launch.command_string(self.argv))
        self.notify("command copied (OSC 52 clipboard)")

    @on(Button.Pressed, "#launch")
    def action_launch(self) -> None:
        if self.error is not None:
            self.notify(f"cannot launch: {self.error}", severity="error")
            return
        self.app.launch_study(list(self.argv))
