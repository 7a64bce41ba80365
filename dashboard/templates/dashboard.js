(function () {
  'use strict';
  // Filters apply as soon as a select changes (without JavaScript, the
  // Apply button submits them).
  document.querySelectorAll('form.filters select').forEach(function (s) {
    s.addEventListener('change', function () { s.form.submit(); });
  });
  // A run in progress: follow its counts over Server-Sent Events.
  var live = document.getElementById('live');
  if (!live || !window.EventSource) return;
  var es = new EventSource(live.getAttribute('data-events'));
  es.addEventListener('progress', function (e) {
    var p = JSON.parse(e.data);
    var box = document.querySelector('[data-run="' + String(p.run) + '"]');
    if (!box) { location.reload(); return; }
    ['pages', 'links', 'checked', 'broken', 'findings'].forEach(function (k) {
      var el = box.querySelector('[data-k="' + k + '"]');
      if (el) el.textContent = Number(p[k]).toLocaleString('en');
    });
  });
  es.addEventListener('done', function () { es.close(); location.reload(); });
  live.setAttribute('data-js', 'live');
})();
