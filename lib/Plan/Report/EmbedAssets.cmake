# Writes the report's stylesheet and script into a C++ include file as raw
# string literals, so that `cleave plan --format html` needs no files at run
# time. Run as a script:
#   cmake -DOUTPUT=file.inc -DCSS=plan-report.css -DJS=plan-report.js -P EmbedAssets.cmake
set(delimiter "cleave_asset")
set(content "// Generated from lib/Plan/Report by EmbedAssets.cmake; do not edit.\n")
foreach(pair "kPlanReportStyle;${CSS}" "kPlanReportScript;${JS}")
  list(GET pair 0 name)
  list(GET pair 1 path)
  file(READ "${path}" text)
  string(FIND "${text}" ")${delimiter}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${path} contains the raw-string delimiter )${delimiter}\"")
  endif()
  string(APPEND content "static const char ${name}[] = R\"${delimiter}(${text})${delimiter}\";\n")
endforeach()
file(WRITE "${OUTPUT}.tmp" "${content}")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
