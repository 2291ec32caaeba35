// Destructive or irreversible acts ask first: a form's data-confirm message, or that of
// the option chosen in one of its lists. Without JavaScript the server still refuses
// whatever the rules refuse; this is the "are you sure" a careful person expects.
document.addEventListener("submit", (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement)) return;
  let message = form.dataset.confirm || "";
  for (const select of form.querySelectorAll("select")) {
    const chosen = select.selectedOptions[0];
    if (chosen && chosen.dataset.confirm) message = chosen.dataset.confirm;
  }
  if (message && !window.confirm(message)) event.preventDefault();
});
