#include "cli/commands.h"

#include <cstdio>
#include <exception>
#include <iostream>

#include "catalog/artifacts.h"
#include "cli/guarded.h"
#include "common/error.h"
#include "common/files.h"
#include "common/json.h"
#include "intake/intake.h"
#include "plan/session.h"
#include "ui/intake_summary.h"
#include "ui/progress.h"
#include "ui/terminal.h"

namespace quarkplan {

int run_intake_command(const IntakeArgs& args) {
  return guarded([&] {
    IntakeContext ctx = resolve_intake_context(args.intake);
    ui::ProgressBar bar(stderr, ui::progress_enabled(stderr, args.json));
    ctx.progress = bar.callback();
    Json analysis = run_intake(args.intake, ctx);
    bar.finish();
    write_file_atomic(args.output, dump_json(analysis));
    if (!args.intake.session.empty()) update_session_after_intake(args.intake.session, analysis, args.output);
    FILE* human = args.json ? stderr : stdout;
    ui::Style st{ui::use_color(human)};
    std::fputs(ui::render_intake_summary(analysis, st).c_str(), human);
    std::fprintf(human, "Wrote %s\n", args.output.c_str());
    if (args.json) std::fputs(dump_json(analysis).c_str(), stdout);
    return kExitOk;
  });
}

int run_validate_command(const ValidateArgs& args) {
  return guarded([&] {
    int bad = 0;
    for (const auto& f : args.files) {
      ValidationOutcome o = validate_artifact_file(f, args.kind);
      if (o.errors.empty()) {
        std::printf("%s: valid %s\n", f.c_str(), o.kind.c_str());
      } else {
        ++bad;
        std::printf("%s: INVALID%s\n", f.c_str(), o.kind.empty() ? "" : (" " + o.kind).c_str());
        for (const auto& e : o.errors) std::printf("  %s\n", e.c_str());
      }
    }
    return bad ? kExitBadInput : kExitOk;
  });
}

}  // namespace quarkplan
