"""REST operations of annotation, one view per operation, over the same services as the pages.

Annotators address a task by its assignment token (``GET /projects/{id}/next`` returns it as ``task``):
the token is random, so the URL says nothing about the prompt, the responses or the models.
"""

import json
import math
from dataclasses import asdict

from django.db import transaction
from django.http import HttpResponse, QueryDict
from django.shortcuts import get_object_or_404
from django.utils.translation import get_language
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, PolymorphicProxySerializer, extend_schema
from rest_framework import status
from rest_framework.generics import ListAPIView
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from accounts.authentication import session_request_same_origin, token_caller
from accounts.permissions import HasRole
from accounts.roles import ANNOTATOR, PROJECT_MANAGER, REVIEWER, has_role
from accounts.services import PersonInvalid
from annotation import selectors, services
from annotation.domain.mqm_tsv import TsvError
from annotation.domain.tool_studies.label_studio import FieldMapping
from annotation.domain.tool_studies.study import StudyInvalid
from annotation.models import SPAN_KINDS, AnnotatorGroup, Assignment, Project
from annotation.serializers import (
    AnnotationInputSerializer,
    AnnotationResultSerializer,
    AnnotatorProjectSerializer,
    AttentionChecksInSerializer,
    AttentionChecksOutSerializer,
    ConceptPairsInputSerializer,
    CriterionSerializer,
    ErrorSerializer,
    FlagRecomputeSerializer,
    MemberAddInputSerializer,
    MemberRemoveInputSerializer,
    MemberSerializer,
    MqmImportInputSerializer,
    NextTaskSerializer,
    ProgressSerializer,
    ProjectCreateInputSerializer,
    ProjectSerializer,
    ProjectStatusInputSerializer,
    ProjectUpdateInputSerializer,
    ReviewInputSerializer,
    ReviewItemSerializer,
    ReviewSerializer,
    SkipInputSerializer,
    StudyImportSerializer,
    ToolStudyErrorSerializer,
    ToolStudyImportInputSerializer,
)
from annotation.tool_files import read_study
from datasets_app.domain.questions import taxonomy_from_data
from datasets_app.services import discard_upload
from datasets_app.uploads import UploadRejected, store_upload

NOT_FOUND = OpenApiResponse(description="No such project or task for you.")


def _lang_of(query: QueryDict) -> str:
    wanted = query.get("lang") or get_language() or "en"
    return "id" if wanted.startswith("id") else "en"


def _lang(request) -> str:
    return _lang_of(request.query_params)


def _error_body(exc: services.AnnotationError) -> dict:
    body = {"detail": str(exc)}
    if isinstance(exc, services.SubmissionInvalid | services.ProjectInvalid):
        body["errors"] = exc.errors
    return body


def _error(exc: services.AnnotationError, code: int = status.HTTP_400_BAD_REQUEST) -> Response:
    return Response(_error_body(exc), status=code)


# --- projects (project managers) -----------------------------------------------------------------------


class ProjectListApi(ListAPIView):
    """Project managers: every project. Annotators: the active and paused projects they are members of,
    with their own progress (no dataset, no settings that could name a model)."""

    permission_classes = [HasRole(PROJECT_MANAGER, ANNOTATOR)]
    serializer_class = ProjectSerializer

    def _manager(self) -> bool:
        return has_role(self.request.user, PROJECT_MANAGER)

    def get_serializer_class(self):
        return ProjectSerializer if self._manager() else AnnotatorProjectSerializer

    def get_queryset(self):
        if self._manager():
            return selectors.project_list().prefetch_related("groups")
        return selectors.annotator_projects(user=self.request.user)

    @extend_schema(
        responses={
            200: PolymorphicProxySerializer(
                component_name="ProjectListItem",
                serializers=[ProjectSerializer, AnnotatorProjectSerializer],
                resource_type_field_name=None,
                many=True,
            )
        },
        summary="Projects: all of them for project managers; an annotator's own, with their progress",
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class ProjectCreateApi(APIView):
    permission_classes = [HasRole(PROJECT_MANAGER)]

    @extend_schema(
        request=ProjectCreateInputSerializer,
        responses={201: ProjectSerializer, 400: ErrorSerializer},
        summary="Create a draft project and its tasks from a dataset",
    )
    def post(self, request):
        serializer = ProjectCreateInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            project = services.project_create(created_by=request.user, **serializer.validated_data)
        except services.AnnotationError as exc:
            return _error(exc)
        return Response(ProjectSerializer(project).data, status=status.HTTP_201_CREATED)


class ProjectDetailApi(APIView):
    permission_classes = [HasRole(PROJECT_MANAGER)]

    @extend_schema(responses={200: ProjectSerializer, 404: NOT_FOUND})
    def get(self, request, project_id: int):
        return Response(ProjectSerializer(get_object_or_404(Project, pk=project_id)).data)


class ProjectUpdateApi(APIView):
    permission_classes = [HasRole(PROJECT_MANAGER)]

    @extend_schema(
        request=ProjectUpdateInputSerializer, responses={200: ProjectSerializer, 400: ErrorSerializer}
    )
    def patch(self, request, project_id: int):
        project = get_object_or_404(Project, pk=project_id)
        serializer = ProjectUpdateInputSerializer(data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        try:
            project = services.project_update(project=project, **serializer.validated_data)
        except services.AnnotationError as exc:
            return _error(exc)
        return Response(ProjectSerializer(project).data)


class ProjectDeleteApi(APIView):
    permission_classes = [HasRole(PROJECT_MANAGER)]

    @extend_schema(responses={204: None, 409: ErrorSerializer})
    def delete(self, request, project_id: int):
        project = get_object_or_404(Project, pk=project_id)
        try:
            services.project_delete(project=project)
        except services.AnnotationError as exc:
            return _error(exc, status.HTTP_409_CONFLICT)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ProjectStatusApi(APIView):
    permission_classes = [HasRole(PROJECT_MANAGER)]

    @extend_schema(
        request=ProjectStatusInputSerializer,
        responses={200: ProjectSerializer, 409: ErrorSerializer},
        summary="Activate, pause or close a project",
    )
    def post(self, request, project_id: int):
        project = get_object_or_404(Project, pk=project_id)
        serializer = ProjectStatusInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            project = services.project_status_set(project=project, action=serializer.validated_data["action"])
        except services.AnnotationError as exc:
            return _error(exc, status.HTTP_409_CONFLICT)
        return Response(ProjectSerializer(project).data)


class ProjectProgressApi(APIView):
    permission_classes = [HasRole(PROJECT_MANAGER)]

    @extend_schema(responses={200: ProgressSerializer})
    def get(self, request, project_id: int):
        report = selectors.progress_report(project=get_object_or_404(Project, pk=project_id))
        overall = None
        if report.project is not None:
            overall = {**asdict(report.project), "fraction": report.project.fraction}
        return Response({"project": overall, "groups": report.groups, "annotators": report.annotators})


class ProjectQualityApi(APIView):
    """Quality signals per annotator (gold accuracy, straight-lining, speed, position bias; attention checks
    seen, found, missed and share found in error-span projects) with the project's thresholds, the number
    of attention checks and the names of the flagged signals."""

    permission_classes = [HasRole(PROJECT_MANAGER)]

    @extend_schema(responses={200: OpenApiTypes.OBJECT}, summary="Quality signals per annotator")
    def get(self, request, project_id: int):
        report = selectors.quality_report(project=get_object_or_404(Project, pk=project_id))
        return Response(
            {
                "thresholds": report.thresholds.as_dict(),
                "attention_checks": report.n_checks,
                "annotators": selectors.quality_rows(report),
            }
        )


class MemberListApi(ListAPIView):
    permission_classes = [HasRole(PROJECT_MANAGER)]
    serializer_class = MemberSerializer

    def get_queryset(self):
        return selectors.project_members(project=get_object_or_404(Project, pk=self.kwargs["project_id"]))


class MemberAddApi(APIView):
    permission_classes = [HasRole(PROJECT_MANAGER)]

    @extend_schema(request=MemberAddInputSerializer, responses={201: MemberSerializer, 400: ErrorSerializer})
    def post(self, request, project_id: int):
        project = get_object_or_404(Project, pk=project_id)
        serializer = MemberAddInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            with transaction.atomic():
                group = AnnotatorGroup.objects.filter(project=project, name=data["group"]).first()
                if group is None:
                    group = services.annotator_group_create(project=project, name=data["group"])
                membership = services.project_member_add(project=project, user=data["user"], group=group)
        except services.AnnotationError as exc:
            return _error(exc)
        return Response(MemberSerializer(membership).data, status=status.HTTP_201_CREATED)


class MemberRemoveApi(APIView):
    permission_classes = [HasRole(PROJECT_MANAGER)]

    @extend_schema(request=MemberRemoveInputSerializer, responses={204: None, 404: NOT_FOUND})
    def post(self, request, project_id: int):
        project = get_object_or_404(Project, pk=project_id)
        serializer = MemberRemoveInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        if not services.project_member_remove(project=project, user=serializer.validated_data["user"]):
            return Response({"detail": "Not a member."}, status=status.HTTP_404_NOT_FOUND)
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- the annotation loop (annotators) -------------------------------------------------------------------


CLAIM_NEEDS_SAME_ORIGIN = (
    "A claim made with the browser session needs the X-CSRFToken header (the page's CSRF token) or the "
    "HX-Request header; API clients authenticate with 'Authorization: Token <key>'."
)


class NextTaskApi(APIView):
    permission_classes = [HasRole(ANNOTATOR)]

    @extend_schema(
        responses={
            200: NextTaskSerializer,
            204: OpenApiResponse(description="Nothing left for you in this project."),
            403: OpenApiResponse(
                description="Not an annotator, or a browser-session call without X-CSRFToken or HX-Request."
            ),
            404: NOT_FOUND,
            409: ErrorSerializer,
        },
        summary="Claim (or resume) your next blinded task",
        description=(
            "With token authentication, as is. With the browser session, the request must carry the page's CSRF "
            "token in X-CSRFToken (or come from htmx, HX-Request: true), so that a link on another site cannot "
            "claim a task for a logged-in annotator."
        ),
    )
    def get(self, request, project_id: int):
        # A GET that claims: with the session cookie alone, a link on another site could claim for a
        # logged-in annotator.
        if not session_request_same_origin(request):
            return Response({"detail": CLAIM_NEEDS_SAME_ORIGIN}, status=status.HTTP_403_FORBIDDEN)
        try:
            assignment = services.assignment_claim(project=Project(pk=project_id), user=request.user)
        except services.NotAMember:
            return Response({"detail": "Not found."}, status=status.HTTP_404_NOT_FOUND)
        except services.AnnotationError as exc:
            return _error(exc, status.HTTP_409_CONFLICT)
        if assignment is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(selectors.task_view(assignment=assignment, lang=_lang(request)).as_payload())


def _annotation_create(
    *, token: str, user, answer: dict, seconds: float | None, with_next: bool, lang: str
) -> tuple[dict, int]:
    """The body and status of a submit (with ``with_next``, and the caller's next task)."""
    submit = services.assignment_submit_next if with_next else services.assignment_submit
    try:
        outcome = submit(token=token, user=user, payload=answer, seconds=seconds)
    except Assignment.DoesNotExist:
        return {"detail": "Not found."}, status.HTTP_404_NOT_FOUND
    except services.SubmissionInvalid as exc:
        return _error_body(exc), status.HTTP_400_BAD_REQUEST
    except services.AnnotationError as exc:
        return _error_body(exc), status.HTTP_409_CONFLICT
    result = outcome.submitted if with_next else outcome
    body = {"task": token, "status": result.assignment.status, "outcome": result.outcome}
    if with_next:
        following = outcome.next
        body["next"] = (
            selectors.task_view(assignment=following, lang=lang).as_payload()
            if following is not None
            else None
        )
        if outcome.next_refused:
            body["next_detail"] = outcome.next_refused
    return body, status.HTTP_201_CREATED if result.outcome == "created" else status.HTTP_200_OK


class _NotPlain(ValueError):
    """A request body the plain path leaves to DRF's parser and serializer."""


def _refuse_constant(name: str) -> float:
    raise _NotPlain(name)  # NaN and Infinity: DRF's strict parser answers 400


def _plain_answer(body: bytes) -> tuple[dict, float | None]:
    """The answer and seconds of a JSON body that ``AnnotationInputSerializer`` would take as they are;
    ``_NotPlain`` for anything else (the serializer then says what is wrong, in its own words)."""
    try:
        data = json.loads(body.decode("utf-8"), parse_constant=_refuse_constant)
    except (UnicodeDecodeError, ValueError) as exc:
        raise _NotPlain from exc
    if type(data) is not dict or type(data.get("answer")) is not dict:
        raise _NotPlain
    seconds = data.get("seconds")
    if seconds is not None or "seconds" in data:
        if type(seconds) not in (int, float) or not 0 <= seconds < math.inf:
            raise _NotPlain
        seconds = float(seconds)
    return data["answer"], seconds


_JSON = JSONRenderer()
# What DRF's finalize_response adds to this view's responses (and the session middleware's Vary, which
# session authentication's look at the session would have added).
_PLAIN_HEADERS = {"Allow": "POST, OPTIONS", "Vary": "Accept, Cookie"}


class AnnotationCreateApi(APIView):
    """The annotation loop's request (``?next=1``: the answer and the next task in one).

    A token-authenticated JSON request that DRF would accept as it is (no session cookie, a valid token of
    an annotator, a JSON answer object, JSON accepted) is answered without DRF's request, negotiation,
    serializer and response objects: the same services, body, status codes and headers, for a fraction of
    the instructions. Every other request, and every refusal of authentication, permission or input, goes
    through DRF as before (``post``).
    """

    permission_classes = [HasRole(ANNOTATOR)]

    def dispatch(self, request, *args, **kwargs):
        if request.method == "POST":
            response = self._plain(request, kwargs["token"])
            if response is not None:
                return response
        return super().dispatch(request, *args, **kwargs)

    def _plain(self, request, token: str) -> HttpResponse | None:
        if (
            request.content_type != "application/json"
            or request.content_params
            or request.META.get("HTTP_ACCEPT", "*/*") not in ("*/*", "application/json")
            or api_settings.URL_FORMAT_OVERRIDE in request.GET
        ):
            return None
        user = token_caller(request)
        if user is None:
            return None
        try:
            answer, seconds = _plain_answer(request.body)
        except _NotPlain:
            return None
        as_middleware_set, request.user = request.user, user
        if not all(permission.has_permission(request, self) for permission in self.get_permissions()):
            request.user = as_middleware_set  # DRF authenticates again, session first, and refuses
            return None
        body, code = _annotation_create(
            token=token,
            user=user,
            answer=answer,
            seconds=seconds,
            with_next=request.GET.get("next", "") in ("1", "true"),
            lang=_lang_of(request.GET),
        )
        response = HttpResponse(_JSON.render(body), content_type=_JSON.media_type, status=code)
        for name, value in _PLAIN_HEADERS.items():
            response[name] = value
        return response

    @extend_schema(
        request=AnnotationInputSerializer,
        responses={
            201: AnnotationResultSerializer,
            200: AnnotationResultSerializer,
            400: ErrorSerializer,
            404: NOT_FOUND,
            409: ErrorSerializer,
        },
        parameters=[
            OpenApiParameter(
                "next",
                OpenApiTypes.BOOL,
                description="1: claim the caller's next task in the same request and return it as "
                "`next` (null when nothing is left), so an annotation loop is one request.",
            )
        ],
        summary="Submit (or edit) the answer to a task, addressed by its token",
    )
    def post(self, request, token: str):
        serializer = AnnotationInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        body, code = _annotation_create(
            token=token,
            user=request.user,
            answer=serializer.validated_data["answer"],
            seconds=serializer.validated_data.get("seconds"),
            with_next=request.query_params.get("next", "") in ("1", "true"),
            lang=_lang(request),
        )
        return Response(body, status=code)


class TaskSkipApi(APIView):
    permission_classes = [HasRole(ANNOTATOR)]

    @extend_schema(request=SkipInputSerializer, responses={200: AnnotationResultSerializer, 404: NOT_FOUND})
    def post(self, request, token: str):
        serializer = SkipInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            assignment = services.assignment_skip(
                token=token, user=request.user, reason=serializer.validated_data["reason"]
            )
        except Assignment.DoesNotExist:
            return Response({"detail": "Not found."}, status=status.HTTP_404_NOT_FOUND)
        except services.AnnotationError as exc:
            return _error(exc, status.HTTP_409_CONFLICT)
        return Response({"task": token, "status": assignment.status, "outcome": "skipped"})


# --- translation and question jobs (project managers) --------------------------------------------------


def _job_project(project_id: int, *kinds: str) -> Project:
    return get_object_or_404(Project, pk=project_id, kind__in=kinds)


class ConceptPairsAddApi(APIView):
    permission_classes = [HasRole(PROJECT_MANAGER)]

    @extend_schema(
        request=ConceptPairsInputSerializer,
        responses={201: OpenApiResponse(description='{"added": n, "skipped": n}'), 400: ErrorSerializer},
        summary="Add (category, concept) pairs to a question authoring project",
    )
    def post(self, request, project_id: int):
        project = _job_project(project_id, Project.Kind.QUESTION_AUTHORING)
        serializer = ConceptPairsInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        pairs = serializer.validated_data["pairs"]
        records = [(f"item {i}", pair) for i, pair in enumerate(pairs)]
        try:
            counts = services.concept_pairs_add(
                project=project, records=records, language=serializer.validated_data["language"]
            )
        except services.PairsInvalid as exc:
            errors = [{"location": loc, "field": field, "message": msg} for loc, field, msg in exc.errors]
            return Response({"detail": str(exc), "errors": errors}, status=status.HTTP_400_BAD_REQUEST)
        except services.AnnotationError as exc:
            return _error(exc)
        return Response(counts, status=status.HTTP_201_CREATED)


class MqmImportApi(APIView):
    permission_classes = [HasRole(PROJECT_MANAGER)]
    parser_classes = [JSONParser, MultiPartParser]

    @extend_schema(
        request=MqmImportInputSerializer,
        responses={
            201: OpenApiResponse(description='{"project", "dataset", "units", "ratings", "spans", "raters"}'),
            400: ErrorSerializer,
        },
        summary="Import a WMT/Anthea MQM TSV file as an active MQM or ESA project with its raters' spans",
    )
    def post(self, request):
        serializer = MqmImportInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        kind = Project.Kind.TRANSLATION_ESA if data["protocol"] == "esa" else Project.Kind.TRANSLATION_MQM
        try:
            done, users = services.mqm_tsv_import_with_accounts(
                text=data["text"],
                name=data["name"],
                source_language=data["source_language"],
                target_language=data["target_language"],
                kind=kind,
                rater_prefix=data["rater_prefix"],
                created_by=request.user,
            )
        except TsvError as exc:
            return Response({"detail": str(exc), "errors": exc.errors}, status=status.HTTP_400_BAD_REQUEST)
        except services.AnnotationError as exc:
            return _error(exc)
        except PersonInvalid as exc:
            return Response({"detail": str(exc), "errors": exc.errors}, status=status.HTTP_400_BAD_REQUEST)
        return Response(
            {
                "project": done.project.pk,
                "dataset": done.project.dataset_id,
                "units": done.units,
                "ratings": done.ratings,
                "spans": done.spans,
                "raters": {rater: user.get_username() for rater, user in users.items()},
            },
            status=status.HTTP_201_CREATED,
        )


class McqReportApi(APIView):
    permission_classes = [HasRole(PROJECT_MANAGER)]

    @extend_schema(
        summary="Ambiguity flags, exclusions, accuracy, the answer-conflict matrix and the error taxonomy",
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request, project_id: int):
        project = _job_project(project_id, Project.Kind.MCQ_ANSWER)
        report = selectors.mcq_report(project=project)
        matrix = selectors.conflict_matrix(project=project)
        return Response(
            {
                "n_questions": report.n_questions,
                "n_answers": report.n_answers,
                "accuracy": report.accuracy,
                "max_ambiguous": project.max_ambiguous,
                "ambiguous_counts": selectors.ambiguous_counts(project=project),
                "excluded": [e["question_id"] for e in report.excluded],
                "answerers": report.answerers,
                "conflicts": matrix.table.to_dict(orient="records") if matrix is not None else [],
                "total_conflicts": matrix.total_conflicts if matrix is not None else 0,
                "taxonomy": asdict(report.taxonomy) if report.taxonomy is not None else None,
                "option_taxonomy": asdict(report.option_taxonomy)
                if report.option_taxonomy is not None
                else None,
                "taxonomy_categories": [c.as_dict() for c in taxonomy_from_data(project.error_taxonomy)],
                # One label per reviewed LLM-written question; the percentages add up to 100.
                "taxonomy_shares": report.taxonomy_shares.as_dict()
                if report.taxonomy_shares is not None
                else None,
            }
        )


class TranslationReportApi(APIView):
    permission_classes = [HasRole(PROJECT_MANAGER)]

    @extend_schema(
        summary="Flags per language and register, reject rate per translator, rounds per unit",
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request, project_id: int):
        project = _job_project(project_id, Project.Kind.TRANSLATION, Project.Kind.TRANSLATION_REVIEW)
        return Response(asdict(selectors.translation_report(project=project, lang=_lang(request))))


class SpanScoresApi(APIView):
    """System scores of an error-span project (MQM or ESA) and the raters' agreement on spans: the same
    numbers as the project's scores page."""

    permission_classes = [HasRole(PROJECT_MANAGER)]

    @extend_schema(
        summary="MQM or ESA score per system with 95% bootstrap intervals, breakdowns and span agreement",
        parameters=[
            OpenApiParameter(
                "bootstrap", int, description="Bootstrap draws over segments (0-10000, default 1000)."
            ),
            OpenApiParameter("seed", int, description="Seed of the bootstrap (default: the project's seed)."),
        ],
        responses={200: OpenApiTypes.OBJECT, 400: ErrorSerializer},
    )
    def get(self, request, project_id: int):
        project = _job_project(project_id, *SPAN_KINDS)
        numbers = {}
        for name, default, high in (("bootstrap", 1000, 10_000), ("seed", project.seed, 2**32 - 1)):
            raw = request.query_params.get(name, "")
            if raw == "":
                numbers[name] = default
                continue
            if not raw.isdigit() or int(raw) > high:
                return Response(
                    {"detail": f"{name} must be a whole number from 0 to {high}; got {raw[:20]!r}."},
                    status=status.HTTP_400_BAD_REQUEST,
                )
            numbers[name] = int(raw)
        report = selectors.span_scores_report(
            project, lang=_lang(request), draws=numbers["bootstrap"], seed=numbers["seed"]
        )
        for rows in (report["systems"], *report["by_language"].values(), *report["by_register"].values()):
            for row in rows:
                row.pop("by_category_named", None)
        return Response(report)


class AttentionChecksApi(APIView):
    """Set an error-span project's attention checks and add the checks the share asks for that the project
    lacks (a new task per check, k places per group); the same as the project page's form."""

    permission_classes = [HasRole(PROJECT_MANAGER)]

    @extend_schema(
        request=AttentionChecksInSerializer,
        responses={200: AttentionChecksOutSerializer, 400: ErrorSerializer, 409: ErrorSerializer},
        summary="Set the attention checks of an MQM or ESA project and add the missing ones",
    )
    def post(self, request, project_id: int):
        project = _job_project(project_id, *SPAN_KINDS)
        given = AttentionChecksInSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        setting = dict(given.validated_data)
        try:
            with transaction.atomic():
                settings = {**(project.span_settings or {}), "attention_checks": setting}
                services.project_update(project=project, span_settings=settings)
                added = services.attention_checks_add(project=project)
        except services.ProjectInvalid as exc:
            return _error(exc)
        except services.AnnotationError as exc:
            return _error(exc, status.HTTP_409_CONFLICT)
        out = {
            "added": added,
            "checks": selectors.attention_check_count(project),
            "attention_checks": selectors.span_config_of(project).checks.as_json(),
        }
        return Response(AttentionChecksOutSerializer(out).data)


class FlagRecomputeStartApi(APIView):
    permission_classes = [HasRole(PROJECT_MANAGER)]

    @extend_schema(request=None, responses={202: FlagRecomputeSerializer, 409: ErrorSerializer})
    def post(self, request, project_id: int):
        project = _job_project(project_id, Project.Kind.TRANSLATION, Project.Kind.TRANSLATION_REVIEW)
        try:
            run = services.flag_recompute_queue(project=project, user=request.user)
        except services.AnnotationError as exc:
            return _error(exc, status.HTTP_409_CONFLICT)
        return Response(FlagRecomputeSerializer(run).data, status=status.HTTP_202_ACCEPTED)


# --- studies from other tools (project managers) ----------------------------------------------------------


def _study_error(detail: str, problems: list[dict], total: int) -> Response:
    return Response(
        {"detail": detail, "errors": problems, "n_errors": total}, status=status.HTTP_400_BAD_REQUEST
    )


class ToolStudyImportApi(APIView):
    permission_classes = [HasRole(PROJECT_MANAGER)]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request={"multipart/form-data": ToolStudyImportInputSerializer},
        responses={202: StudyImportSerializer, 200: OpenApiTypes.OBJECT, 400: ToolStudyErrorSerializer},
        summary="Import a study from Label Studio, Argilla or Potato with its answers (in the background)",
        description="The file is read at once: a file with problems is refused whole with every problem "
        "(file, record, field, message) and nothing is written; dry_run describes the study (200) without "
        "writing. Otherwise the import is queued (202, its URL in `url` and the Location header): a worker "
        "makes the export a dataset, an active project of the study's kind and every answer submitted work "
        "of a pseudonymous annotator, in one transaction. Poll the import (`GET url`) until `status` is "
        "succeeded (`project`, `counts`) or failed (`errors`); cancel and retry it like any job.",
    )
    def post(self, request):
        serializer = ToolStudyImportInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        mapping = None
        if any(k in request.data for k in ("prompt_field", "response_field", "item_id_field")):
            mapping = FieldMapping(
                prompt=data.get("prompt_field", ""),
                responses=tuple(data.get("response_field") or ()),
                item_id=data.get("item_id_field", ""),
            )
        upload = data["file"]
        try:
            path, _format = store_upload(upload, file_format=None)
        except UploadRejected as exc:
            return _study_error(
                str(exc), [{"file": upload.name, "record": "", "field": "file", "message": str(exc)}], 1
            )
        queued = False
        try:
            study = read_study(data["tool"], path, mapping=mapping, shown=upload.name)
            if data["dry_run"]:
                return Response({"dry_run": True, **study.summary()})
            job = services.study_import_queue(
                study=study,
                upload_path=path,
                original_filename=upload.name,
                name=data["name"],
                language=data["language"],
                mapping=mapping,
                created_by=request.user,
            )
            queued = True
        except StudyInvalid as exc:
            return _study_error(str(exc), [p.as_dict() for p in exc.problems], exc.total)
        except services.ProjectInvalid as exc:
            problems = [
                {"file": upload.name, "record": "", "field": k, "message": v} for k, v in exc.errors.items()
            ]
            return _study_error(str(exc), problems, len(problems))
        finally:
            if not queued:  # the queued import owns its upload from here
                discard_upload(path)
        job.refresh_from_db()  # a worker in the same process (eager mode) may have run it already
        answer = StudyImportSerializer(job, context={"progress": services.study_import_progress_get(job=job)})
        body = answer.data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})


# --- rubrics and review --------------------------------------------------------------------------------


class ProjectRubricApi(APIView):
    """The criteria a project's annotators see for a prompt category, with the rubric version, level texts
    in both languages and the scale (the same shape as a task's ``criteria``)."""

    permission_classes = [HasRole(PROJECT_MANAGER)]

    @extend_schema(
        parameters=[OpenApiParameter("category", str, description="Prompt category (empty: the defaults).")],
        responses={200: CriterionSerializer(many=True), 404: NOT_FOUND},
    )
    def get(self, request, project_id: int):
        project = get_object_or_404(Project, pk=project_id)
        views = selectors.rubrics_for(project, request.query_params.get("category", ""))
        return Response(
            [
                {
                    "key": c.key,
                    "label": c.label,
                    "question": c.question,
                    "rubric_version": c.version,
                    "levels": {lang: {str(v): t for v, t in levels} for lang, levels in c.levels.items()},
                    "scale": c.scale.as_json(),
                }
                for c in views
            ]
        )


class ReviewQueueApi(ListAPIView):
    """Submitted work of others waiting for review, oldest first; the same filters as the review page
    (``project``, ``kind``, ``annotator``, ``group``, ``status`` pending/resubmitted/accepted/all, ``from``,
    ``to``, ``sort``)."""

    permission_classes = [HasRole(REVIEWER, PROJECT_MANAGER)]
    serializer_class = ReviewItemSerializer

    @extend_schema(
        parameters=[
            OpenApiParameter("project", int),
            OpenApiParameter("status", str, description="pending (default), resubmitted, accepted or all"),
        ]
    )
    def get(self, request, *args, **kwargs):
        try:
            self.filters = selectors.ReviewFilter.from_query(request.query_params)
        except selectors.ReviewFilterInvalid as exc:
            return Response({"detail": str(exc), "errors": exc.errors}, status=status.HTTP_400_BAD_REQUEST)
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        return selectors.review_queue_filtered(filters=self.filters, reviewer_id=self.request.user.pk)


class ReviewCreateApi(APIView):
    """Accept or reject a submitted assignment (a rejection needs a comment and sends the task back to its
    annotator as a new round)."""

    permission_classes = [HasRole(REVIEWER, PROJECT_MANAGER)]

    @extend_schema(request=ReviewInputSerializer, responses={201: ReviewSerializer, 400: ErrorSerializer})
    def post(self, request):
        serializer = ReviewInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        assignment = get_object_or_404(Assignment, pk=data["assignment"])
        try:
            review = services.review_create(
                assignment=assignment, reviewer=request.user, verdict=data["verdict"], comment=data["comment"]
            )
        except services.AnnotationError as exc:
            return _error(exc)
        return Response(ReviewSerializer(review).data, status=status.HTTP_201_CREATED)
