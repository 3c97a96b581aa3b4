/// `/app/app.css`: both apps' one stylesheet. Colours keep text at a contrast of at least 4.5:1
/// (WCAG AA) on their backgrounds; focus is always visible.
enum WebAppStyle {
    static let source = """
        * { box-sizing: border-box; }
        body { margin: 0; font: 16px/1.45 system-ui, sans-serif; background: #f4f5f7; color: #1d2430; }
        header { display: flex; gap: 12px; align-items: center; padding: 10px 16px; background: #1d2430; color: #fff; }
        header h1 { margin: 0; font-size: 19px; flex: 1; }
        main { max-width: 720px; margin: 0 auto; padding: 12px; }
        label { display: block; margin: 10px 0 4px; font-weight: 600; }
        input { width: 100%; padding: 10px; font: inherit; border: 1px solid #5b6574; border-radius: 6px; background: #fff; color: #1d2430; }
        input[type=checkbox] { width: auto; }
        button { font: inherit; padding: 10px 16px; border: 0; border-radius: 6px; background: #1f5fd6; color: #fff; cursor: pointer; }
        button.secondary { background: #fff; color: #1d2430; border: 1px solid #5b6574; }
        button:disabled { background: #c5ccd6; color: #1d2430; cursor: not-allowed; }
        header button { background: #fff; color: #1d2430; padding: 6px 12px; }
        :focus-visible { outline: 3px solid #f0a000; outline-offset: 2px; }
        .actions { display: flex; flex-wrap: wrap; gap: 8px; margin: 12px 0; }
        .card { background: #fff; border-radius: 8px; padding: 12px 16px; margin: 12px 0; box-shadow: 0 1px 3px rgba(0,0,0,.15); }
        .muted { color: #4a5463; }
        .notice { min-height: 1.4em; margin: 8px 16px; }
        .notice.error { color: #a4161a; font-weight: 600; }
        .choices, .offers { list-style: none; padding: 0; margin: 6px 0; }
        .choices button { width: 100%; text-align: left; margin: 2px 0; background: #fff; color: #1d2430; border: 1px solid #c5ccd6; }
        .offer button { margin-right: 8px; }
        .switch { display: flex; gap: 8px; align-items: center; }
        svg { display: block; width: 100%; height: auto; background: #e9eef3; border-radius: 8px; cursor: crosshair; }
        .street { stroke: #fff; stroke-width: 5; stroke-linecap: round; fill: none; }
        .line { fill: none; stroke: #1f5fd6; stroke-width: 5; stroke-linejoin: round; stroke-linecap: round; }
        .marker { stroke: #fff; stroke-width: 3; fill: #1d2430; }
        .marker.pickup-marker, .marker.me-marker { fill: #1f7a3a; }
        .marker.dropoff-marker, .marker.target-marker { fill: #c62828; }
        .marker.driver-marker { fill: #1f5fd6; }
        [hidden] { display: none !important; }
        fieldset { border: 1px solid #c5ccd6; border-radius: 6px; }
        fieldset button { margin: 4px; }
        """
}
