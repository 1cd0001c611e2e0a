"""Developer tools: GitHub, GitLab, Bitbucket, Jira, Linear, Sentry, PagerDuty, CI systems."""
from dsl import *

LOGIN = S("Account login.", pat="^[A-Za-z0-9-]{1,39}$")
SHA = S("Git commit SHA.", pat="^[0-9a-f]{40}$")

GH_USER = O("login id type", d="A GitHub user (simple form).",
            login=LOGIN, id=I("User id.", min=1), node_id=S(), avatar_url=URL(), html_url=URL(),
            type=E("User", "Organization", "Bot"), site_admin=B())
GH_LABEL = O("id name color", id=I(min=1), name=S(max=50), color=S("Hex color without #.", pat="^[0-9a-fA-F]{6}$"),
             description=OPT(S(max=100)), default=B())

schema("github_issue", O(
    "id number title state user labels created_at updated_at",
    id=I(min=1), node_id=S(), number=I("Issue number within the repository.", min=1),
    title=S(max=256), body=OPT(S()), state=E("open", "closed"),
    state_reason=OPT(E("completed", "reopened", "not_planned")),
    user=R("user"), labels=A(R("label")), assignees=A(R("user"), max=10),
    milestone=OPT(O("number title state", number=I(min=1), title=S(), state=E("open", "closed"), due_on=OPT(TS()))),
    locked=B(), comments=I(min=0), html_url=URL(),
    created_at=TS(), updated_at=TS(), closed_at=OPT(TS()),
    author_association=E("OWNER", "MEMBER", "COLLABORATOR", "CONTRIBUTOR", "FIRST_TIME_CONTRIBUTOR", "NONE")),
    title="GitHub issue", d="An issue as returned by GET /repos/{owner}/{repo}/issues/{number}.",
    defs={"user": GH_USER, "label": GH_LABEL})

schema("github_issue_create", O(
    "title", title=S("The title of the issue.", min=1, max=256), body=S("The contents of the issue."),
    assignees=A(LOGIN, max=10), milestone=ANY(S(), I(min=1), d="Milestone number or title."),
    labels=A(S(max=50)), type=OPT(S("Issue type name."))),
    title="GitHub create issue", d="Request body of POST /repos/{owner}/{repo}/issues.")

schema("github_pull_request_create", O(
    "title head base", title=S(max=256), head=S("The branch where your changes are implemented, owner:branch."),
    head_repo=S(), base=S("Branch to merge into."), body=S(), maintainer_can_modify=B(default=True),
    draft=B(default=False), issue=I(min=1)),
    title="GitHub create pull request")

schema("github_repository", O(
    "id name full_name private owner html_url default_branch",
    id=I(min=1), node_id=S(), name=S(pat="^[A-Za-z0-9_.-]+$"), full_name=S(), private=B(),
    owner=R("user"), html_url=URL(), description=OPT(S()), fork=B(), homepage=OPT(S()),
    language=OPT(S()), forks_count=I(min=0), stargazers_count=I(min=0), watchers_count=I(min=0),
    size=I("Size in kilobytes.", min=0), default_branch=S(), open_issues_count=I(min=0),
    is_template=B(), topics=A(S(pat="^[a-z0-9][a-z0-9-]{0,49}$"), max=20), has_issues=B(),
    has_projects=B(), has_wiki=B(), has_pages=B(), has_discussions=B(), archived=B(), disabled=B(),
    visibility=E("public", "private", "internal"), pushed_at=TS(), created_at=TS(), updated_at=TS(),
    license=OPT(O("key name", key=S(), name=S(), spdx_id=OPT(S()), url=OPT(URL())))),
    title="GitHub repository", defs={"user": GH_USER})

schema("github_commit_status", O(
    "state", state=E("error", "failure", "pending", "success"), target_url=OPT(URL()),
    description=OPT(S(max=140)), context=S(default="default")),
    title="GitHub create commit status")

schema("github_check_run_create", O(
    "name head_sha", name=S(), head_sha=SHA, details_url=URL(), external_id=S(),
    status=E("queued", "in_progress", "completed", "waiting", "requested", "pending"),
    started_at=TS(), conclusion=E("action_required", "cancelled", "failure", "neutral", "success", "skipped", "stale", "timed_out"),
    completed_at=TS(),
    output=O("title summary", title=S(), summary=S(max=65535), text=S(max=65535),
             annotations=A(O("path start_line end_line annotation_level message",
                             path=S(), start_line=I(min=1), end_line=I(min=1), start_column=I(min=1), end_column=I(min=1),
                             annotation_level=E("notice", "warning", "failure"), message=S(), title=S(), raw_details=S()),
                           max=50),
             images=A(O("alt image_url", alt=S(), image_url=URL(), caption=S()))),
    actions=A(O("label description identifier", label=S(max=20), description=S(max=40), identifier=S(max=20)), max=3)),
    title="GitHub create check run")

schema("github_webhook_push", O(
    "ref before after repository pusher commits",
    ref=S("Full git ref that was pushed.", examples=["refs/heads/main"]), before=SHA, after=SHA,
    created=B(), deleted=B(), forced=B(), compare=URL(),
    commits=A(R("commit"), max=20), head_commit=OPT(R("commit")),
    repository=O("id name full_name", id=I(min=1), name=S(), full_name=S(), private=B(), html_url=URL()),
    pusher=O("name", name=S(), email=OPT(EMAIL())), sender=GH_USER),
    title="GitHub push webhook payload",
    defs={"commit": O("id message timestamp author", id=SHA, tree_id=SHA, distinct=B(), message=S(), timestamp=TS(), url=URL(),
                      author=O("name email", name=S(), email=EMAIL(), username=S()),
                      committer=O("name email", name=S(), email=EMAIL(), username=S()),
                      added=A(S()), removed=A(S()), modified=A(S()))})

schema("github_release_create", O(
    "tag_name", tag_name=S(), target_commitish=S(), name=S(), body=S(), draft=B(default=False),
    prerelease=B(default=False), discussion_category_name=S(), generate_release_notes=B(default=False),
    make_latest=E("true", "false", "legacy", default="true")),
    title="GitHub create release")

schema("github_workflow_dispatch", O(
    "ref", ref=S("The git reference for the workflow."), inputs=MAP(TYPES("string", "number", "boolean"), "Input keys and values.", )),
    title="GitHub workflow dispatch")

schema("github_gist_create", O(
    "files", description=S(), public=B(default=False),
    files=MAP(O("content", content=S()), "Names and content for the files that make up the gist.")),
    title="GitHub create gist")

schema("github_review_comment", O(
    "body commit_id path", body=S(), commit_id=SHA, path=S(), line=I(min=1), side=E("LEFT", "RIGHT"),
    start_line=I(min=1), start_side=E("LEFT", "RIGHT"), in_reply_to=I(min=1), subject_type=E("line", "file")),
    title="GitHub pull request review comment")

# A recursive directory tree as returned by the git trees API, nested here for a file tree.
schema("github_file_tree", R("node"), title="Repository file tree",
       d="A directory tree: each node is a file or a directory with children.",
       defs={"node": O("name type path", name=S(min=1), path=S(), type=E("file", "dir", "symlink", "submodule"),
                       size=I(min=0), sha=SHA, children=A(R("node"), "Entries of a directory."))})

schema("gitlab_merge_request_create", O(
    "source_branch target_branch title", source_branch=S(), target_branch=S(), title=S(max=255),
    assignee_id=I(min=1), assignee_ids=A(I(min=1)), reviewer_ids=A(I(min=1)), description=S(max=1048576),
    target_project_id=I(min=1), labels=S("Comma-separated label names."), milestone_id=I(min=1),
    remove_source_branch=B(), allow_collaboration=B(), squash=B()),
    title="GitLab create merge request")

schema("gitlab_pipeline", O(
    "id iid project_id sha ref status",
    id=I(min=1), iid=I(min=1), project_id=I(min=1), sha=SHA, ref=S(),
    status=E("created", "waiting_for_resource", "preparing", "pending", "running", "success", "failed", "canceled", "skipped", "manual", "scheduled"),
    source=E("push", "web", "trigger", "schedule", "api", "external", "pipeline", "chat", "merge_request_event"),
    created_at=TS(), updated_at=TS(), web_url=URL(), duration=OPT(I(min=0)), coverage=OPT(S()),
    user=O("id username", id=I(min=1), username=S(), name=S(), state=E("active", "blocked"), avatar_url=URL())),
    title="GitLab pipeline")

schema("gitlab_ci_job", O(
    "script", stage=S(default="test"), image=ANY(S(), O("name", name=S(), entrypoint=A(S()))),
    script=A(S(), min=1), before_script=A(S()), after_script=A(S()),
    variables=MAP(S()), tags=A(S()), allow_failure=B(default=False),
    when=E("on_success", "on_failure", "always", "manual", "delayed", "never", default="on_success"),
    timeout=S(pat="^[0-9]+[hms]$"), retry=I(min=0, max=2),
    artifacts=O("", paths=A(S()), expire_in=S(), when=E("on_success", "on_failure", "always")),
    needs=A(S()), only=A(S()), except_=A(S())),
    title="GitLab CI job definition")

schema("bitbucket_pullrequest", O(
    "title source destination", title=S(), description=S(),
    source=O("branch", branch=O("name", name=S()), repository=O("full_name", full_name=S())),
    destination=O("branch", branch=O("name", name=S())),
    reviewers=A(O("uuid", uuid=S(pat="^\\{[0-9a-f-]{36}\\}$"))), close_source_branch=B()),
    title="Bitbucket create pull request")

ADF = O("type version content", d="Atlassian Document Format root node.",
        type=C("doc"), version=C(1), content=A(R("adf_node")))
ADF_NODE = O("type", type=E("paragraph", "text", "heading", "bulletList", "orderedList", "listItem", "codeBlock", "blockquote", "hardBreak", "mention"),
             text=S(), attrs=MAP(TYPES("string", "integer", "boolean")),
             marks=A(O("type", type=E("strong", "em", "code", "link", "strike", "underline"), attrs=MAP(S()))),
             content=A(R("adf_node")))

schema("jira_issue_create", O(
    "fields", update=MAP(A(O("", add=MAP(S()), set=TYPES("string", "object", "array")))),
    fields=O("project summary issuetype",
             project=O("", id=S(pat="^[0-9]+$"), key=S(pat="^[A-Z][A-Z0-9]{1,9}$")),
             summary=S(max=255), issuetype=O("", id=S(), name=E("Bug", "Task", "Story", "Epic", "Subtask")),
             description=R("adf"), priority=O("", id=S(), name=E("Highest", "High", "Medium", "Low", "Lowest")),
             labels=A(S(pat="^[^\\s]+$")), assignee=O("", accountId=S()), reporter=O("", accountId=S()),
             duedate=DATE(), components=A(O("", id=S(), name=S())), fixVersions=A(O("", id=S(), name=S())),
             parent=O("", key=S(pat="^[A-Z][A-Z0-9]+-[0-9]+$")),
             timetracking=O("", originalEstimate=S(pat="^[0-9]+[wdhm]$"), remainingEstimate=S(pat="^[0-9]+[wdhm]$")),
             addl=True)),
    title="Jira create issue", d="Request body of POST /rest/api/3/issue.",
    defs={"adf": ADF, "adf_node": ADF_NODE})

schema("jira_issue_transition", O(
    "transition", transition=O("id", id=S(pat="^[0-9]+$")),
    fields=MAP(TYPES("string", "object")),
    update=O("", comment=A(O("add", add=O("body", body=S()))))),
    title="Jira transition issue")

schema("jira_worklog", O(
    "timeSpentSeconds started", comment=S(), started=S(pat="^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}[+-][0-9]{4}$"),
    timeSpentSeconds=I(min=60), visibility=O("type value", type=E("group", "role"), value=S())),
    title="Jira add worklog")

schema("jira_sprint", O(
    "name originBoardId", name=S(max=30), startDate=TS(), endDate=TS(), originBoardId=I(min=1), goal=S(),
    state=E("future", "active", "closed")), title="Jira create sprint")

schema("jira_jql_search", O(
    "jql", jql=S("A JQL expression.", min=1), startAt=I(min=0, default=0), maxResults=I(min=1, max=100, default=50),
    fields=A(S()), expand=A(E("renderedFields", "names", "schema", "transitions", "operations", "editmeta", "changelog")),
    validateQuery=E("strict", "warn", "none")), title="Jira search request")

schema("confluence_page_create", O(
    "spaceId title body", spaceId=S(pat="^[0-9]+$"), status=E("current", "draft"), title=S(max=255), parentId=S(),
    body=O("representation value", representation=E("storage", "atlas_doc_format", "wiki"), value=S())),
    title="Confluence create page")

schema("linear_issue_create", O(
    "teamId title", teamId=UUID(), title=S(), description=S("Markdown description."), assigneeId=UUID(),
    priority=I("0 none, 1 urgent, 2 high, 3 medium, 4 low.", min=0, max=4), estimate=I(min=0, max=21),
    labelIds=A(UUID()), stateId=UUID(), projectId=UUID(), cycleId=UUID(), parentId=UUID(), dueDate=DATE(),
    subscriberIds=A(UUID())), title="Linear issueCreate input")

schema("sentry_event", O(
    "event_id timestamp platform level",
    event_id=S(pat="^[0-9a-f]{32}$"), timestamp=TS(), platform=E("python", "javascript", "node", "java", "go", "ruby", "php", "csharp", "native", "other"),
    level=E("fatal", "error", "warning", "info", "debug"), logger=S(), transaction=S(), server_name=S(), release=S(),
    dist=S(), environment=S(), message=O("", formatted=S(), message=S(), params=A(S())),
    tags=MAP(S(max=200)), extra=MAP(TYPES("string", "number", "boolean", "null")),
    user=O("", id=S(), email=EMAIL(), ip_address=S(fmt="ipv4"), username=S()),
    exception=O("values", values=A(O("type value", type=S(), value=S(), module=S(),
                                       stacktrace=O("frames", frames=A(R("frame"))),
                                       mechanism=O("type", type=S(), handled=B()))))),
    title="Sentry event payload",
    defs={"frame": O("", filename=S(), function=S(), module=S(), lineno=I(min=0), colno=I(min=0), abs_path=S(),
                     context_line=S(), pre_context=A(S(), max=5), post_context=A(S(), max=5), in_app=B(),
                     vars=MAP(S()))})

schema("pagerduty_event_v2", O(
    "routing_key event_action", routing_key=S(pat="^[a-z0-9]{32}$"), event_action=E("trigger", "acknowledge", "resolve"),
    dedup_key=S(max=255),
    payload=O("summary source severity", summary=S(max=1024), source=S(), severity=E("critical", "error", "warning", "info"),
              timestamp=TS(), component=S(), group=S(), class_=S(), custom_details=MAP(TYPES("string", "number", "boolean"))),
    images=A(O("src", src=URL(), href=URL(), alt=S())), links=A(O("href", href=URL(), text=S())),
    client=S(), client_url=URL()), title="PagerDuty Events API v2 event")

schema("pagerduty_incident_create", O(
    "incident", incident=O("type title service",
                           type=C("incident"), title=S(), urgency=E("high", "low"), incident_key=S(),
                           service=O("id type", id=S(pat="^P[A-Z0-9]{6}$"), type=C("service_reference")),
                           priority=O("id type", id=S(), type=C("priority_reference")),
                           body=O("type details", type=C("incident_body"), details=S()),
                           escalation_policy=O("id type", id=S(), type=C("escalation_policy_reference")))),
    title="PagerDuty create incident")

schema("datadog_monitor", O(
    "name type query message", name=S(), type=E("metric alert", "service check", "event alert", "query alert", "composite", "log alert", "synthetics alert"),
    query=S(), message=S(), tags=A(S(pat="^[a-z][a-z0-9_./:-]*$")), priority=OPT(I(min=1, max=5)),
    options=O("", notify_no_data=B(), no_data_timeframe=I(min=2), renotify_interval=I(min=0), timeout_h=I(min=0, max=24),
              include_tags=B(), require_full_window=B(), evaluation_delay=I(min=0),
              thresholds=O("", critical=N(), warning=N(), ok=N(), critical_recovery=N(), warning_recovery=N()))),
    title="Datadog create monitor")

schema("datadog_log_entry", A(O("message", ddsource=S(), ddtags=S(), hostname=S(fmt="hostname"), message=S(), service=S(),
                                status=E("emergency", "alert", "critical", "error", "warning", "notice", "info", "debug")),
                              min=1, max=1000),
       title="Datadog send logs body")

schema("circleci_pipeline_trigger", O(
    "", branch=S(), tag=S(), parameters=MAP(TYPES("string", "integer", "boolean"))),
    title="CircleCI trigger pipeline")

schema("docker_compose_service", O(
    "image", image=S(), build=ANY(S(), O("context", context=S(), dockerfile=S(), args=MAP(S()), target=S())),
    command=ANY(S(), A(S())), entrypoint=ANY(S(), A(S())), environment=ANY(MAP(TYPES("string", "number", "boolean", "null")), A(S())),
    ports=A(ANY(S(pat="^[0-9]{1,5}(:[0-9]{1,5})?(/(tcp|udp))?$"), I(min=1, max=65535))),
    volumes=A(S()), depends_on=A(S(pat="^[a-zA-Z0-9._-]+$")), restart=E("no", "always", "on-failure", "unless-stopped"),
    networks=A(S()), labels=MAP(S()), healthcheck=O("test", test=A(S(), min=1), interval=S(), timeout=S(), retries=I(min=0), start_period=S()),
    deploy=O("", replicas=I(min=0), resources=O("", limits=O("", cpus=S(), memory=S())))),
    title="Docker Compose service")

schema("docker_container_create", O(
    "Image", Hostname=S(), User=S(), AttachStdout=B(), Tty=B(), Env=A(S(pat="^[A-Za-z_][A-Za-z0-9_]*=.*$")),
    Cmd=A(S()), Image=S(), WorkingDir=S(), Entrypoint=A(S()), Labels=MAP(S()),
    ExposedPorts=MAP(O("")), StopSignal=S(),
    HostConfig=O("", Memory=I(min=0), NanoCpus=I(min=0), Binds=A(S()), NetworkMode=S(), AutoRemove=B(), Privileged=B(),
                 RestartPolicy=O("", Name=E("", "no", "always", "unless-stopped", "on-failure"), MaximumRetryCount=I(min=0)),
                 PortBindings=MAP(A(O("", HostIp=S(), HostPort=S(pat="^[0-9]*$")))))),
    title="Docker Engine create container")

schema("npm_package_json", O(
    "name version", name=S(pat="^(@[a-z0-9-~][a-z0-9-._~]*/)?[a-z0-9-~][a-z0-9-._~]*$", max=214),
    version=S(pat="^[0-9]+\\.[0-9]+\\.[0-9]+(-[0-9A-Za-z.-]+)?$"), description=S(), keywords=A(S()),
    homepage=URL(), license=S(), author=ANY(S(), O("name", name=S(), email=EMAIL(), url=URL())),
    main=S(), type=E("module", "commonjs"), scripts=MAP(S()), dependencies=MAP(S()), devDependencies=MAP(S()),
    engines=MAP(S()), private=B(), repository=ANY(S(), O("type url", type=S(), url=S())), files=A(S())),
    title="package.json (subset)")

schema("openapi_server", O("url", url=S(), description=S(),
                            variables=MAP(O("default", enum=A(S(), min=1), default=S(), description=S()))),
       title="OpenAPI server object")

schema("semver_release_note", O(
    "version date sections", version=S(pat="^v?[0-9]+\\.[0-9]+\\.[0-9]+$"), date=DATE(),
    sections=A(O("kind entries", kind=E("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"),
                 entries=A(S(min=1), min=1)), min=1, max=6)), title="Changelog release entry")

# A recursive code-review thread: each comment has replies.
schema("code_review_thread", O(
    "path line comments", path=S(), line=I(min=1), resolved=B(), comments=A(R("comment"), min=1)),
    title="Code review thread", defs={"comment": O("id author body created_at", id=I(min=1), author=S(), body=S(min=1),
                                                  created_at=TS(), reactions=MAP(I(min=0)), replies=A(R("comment")))})
