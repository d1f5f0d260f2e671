"""The summary table of `EventList.table`, laid out as PyTorch's ``_build_table`` lays it.

Columns, in PyTorch's order: Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time
avg, then (with device time) Self CUDA, Self CUDA %, CUDA total, CUDA time avg, then (with
``profile_memory``) CPU Mem, Self CPU Mem and, when device memory was seen, CUDA Mem, Self
CUDA Mem, then # of Calls, Input Shapes (when shapes were recorded), Source Location (when
stacks were kept) and Total <scale>FLOPs (with ``with_flops``, scaled by the smallest
count). Every cell is right-aligned in a 12-wide column except the name, shapes and
source columns, sized by their contents. PyTorch fills the last two columns' cells in the
order FLOPs, source under headers in the order source, FLOPs; here each cell sits under
its own header.
"""
import math

__all__ = ["build_table", "format_time", "format_memory"]

_COLUMN = 12
_FLOP_UNITS = ["FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"]


def format_time(us):
    """Microseconds as PyTorch prints them: "1.234s", "12.345ms" or "123.456us"."""
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def format_memory(nbytes):
    """Bytes as PyTorch prints them: "4.00 KB", "-1.50 MB", "512 B"."""
    for unit, size in (("GB", 1024 ** 3), ("MB", 1024 ** 2), ("KB", 1024)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


def _share(part, whole):
    return f"{100 * part / whole:.2f}%" if whole else "0.00%"


def _flop_scale(smallest):
    power = int(max(0, min(math.log10(smallest) / 3, len(_FLOP_UNITS) - 1)))
    return 10.0 ** (-3 * power), _FLOP_UNITS[power]


def _trim_path(path, width):
    if len(path) > width:
        path = path[len(path) - width:]
        if len(path) > 3:
            path = "..." + path[3:]
    return path


def build_table(events, *, use_device=None, profile_memory=False, with_flops=False, sort_by=None,
                row_limit=100, max_src_column_width=75, max_name_column_width=55,
                max_shapes_column_width=80, header=None, top_level_events_only=False):
    """The table text of `events` (`FunctionEvent` or `FunctionEventAvg` objects)."""
    events = list(events)
    if not events:
        return ""
    if sort_by is not None:
        attr = sort_by.replace("cuda", "device")
        events.sort(key=lambda e: getattr(e, attr), reverse=True)
    device = use_device.upper() if use_device else "None"
    has_device_time = bool(use_device) and any(e.device_time_total > 0 for e in events)
    has_device_mem = bool(use_device) and any(e.self_device_memory_usage > 0 for e in events)
    has_shapes = any(e.input_shapes for e in events)
    stacks = [e.stack for e in events if e.stack]
    flops = [e.flops for e in events if e.flops > 0] if with_flops else []

    name_width = max(len(e.key) for e in events) + 4
    if max_name_column_width is not None:
        name_width = min(name_width, max_name_column_width)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if has_device_time:
        headers += [f"Self {device}", f"Self {device} %", f"{device} total", f"{device} time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
        if has_device_mem:
            headers += [f"{device} Mem", f"Self {device} Mem"]
    headers.append("# of Calls")
    widths = [name_width] + [_COLUMN] * (len(headers) - 1)
    aligns = [">"] * len(headers)
    if has_shapes:
        width = max(len(str(e.input_shapes)) for e in events) + 4
        headers.append("Input Shapes")
        widths.append(min(width, max_shapes_column_width) if max_shapes_column_width else width)
        aligns.append(">")
    src_width = None
    if stacks:
        src_width = max(len(entry) for stack in stacks for entry in stack) + 4
        if max_src_column_width is not None:
            src_width = min(src_width, max_src_column_width)
        headers.append("Source Location")
        widths.append(src_width)
        aligns.append("<")
    if flops:
        flop_scale, flop_unit = _flop_scale(min(flops))
        headers.append(f"Total {flop_unit}")
        widths.append(_COLUMN)
        aligns.append(">")
    row_format = "".join("{: " + a + str(w) + "}  " for a, w in zip(aligns, widths))
    rule = "".join("-" * w + "  " for w in widths)

    self_cpu_sum = sum(e.self_cpu_time_total for e in events)
    self_device_sum = sum(e.self_device_time_total for e in events)
    lines = []
    if header is not None:
        lines += ["=" * (len(rule) - 2), header]
    if top_level_events_only:
        lines += ["=" * (len(rule) - 2), "This report only display top-level ops statistics"]
    lines += [rule, row_format.format(*headers), rule]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        cells = [name, _share(e.self_cpu_time_total, self_cpu_sum), format_time(e.self_cpu_time_total),
                 _share(e.cpu_time_total, self_cpu_sum), format_time(e.cpu_time_total), format_time(e.cpu_time)]
        if has_device_time:
            cells += [format_time(e.self_device_time_total), _share(e.self_device_time_total, self_device_sum),
                      format_time(e.device_time_total), format_time(e.device_time_total / max(e.count, 1))]
        if profile_memory:
            cells += [format_memory(e.cpu_memory_usage), format_memory(e.self_cpu_memory_usage)]
            if has_device_mem:
                cells += [format_memory(e.device_memory_usage), format_memory(e.self_device_memory_usage)]
        cells.append(e.count)
        if has_shapes:
            cells.append(str(e.input_shapes)[:widths[len(cells)]])
        if stacks:
            cells.append(_trim_path(e.stack[0], src_width) if e.stack else "")
        if flops:
            cells.append(f"{e.flops * flop_scale:8.3f}" if e.flops > 0 else "--")
        lines.append(row_format.format(*cells))
        if stacks:
            blank = [""] * len(headers)
            for entry in e.stack[1:]:
                lines.append(row_format.format(*_with_source(blank, headers, _trim_path(entry, src_width))))
            lines.append(row_format.format(*blank))
    lines += [rule, f"Self CPU time total: {format_time(self_cpu_sum)}"]
    if has_device_time:
        lines.append(f"Self {device} time total: {format_time(self_device_sum)}")
    return "\n".join(lines) + "\n"


def _with_source(blank, headers, entry):
    cells = list(blank)
    cells[headers.index("Source Location")] = entry
    return cells
